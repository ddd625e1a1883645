import forge from 'node-forge';
import { selfSignedCertificate } from './auth/x509';

/** A self-signed serving certificate for localhost/127.0.0.1, which doubles as the CA clients trust. */
export function generateServingCertificate(): { key: string; cert: string } {
  const { cert, keyPem } = selfSignedCertificate({
    commonName: 'kube-sim',
    days: 30,
    extensions: [
      { name: 'basicConstraints', cA: true },
      {
        name: 'keyUsage',
        keyCertSign: true,
        digitalSignature: true,
        keyEncipherment: true,
      },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { key: keyPem, cert: forge.pki.certificateToPem(cert) };
}
