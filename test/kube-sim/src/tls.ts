import selfsigned from 'selfsigned';

/** A self-signed serving certificate for localhost/127.0.0.1, which doubles as the CA clients trust. */
export function generateServingCertificate(): { key: string; cert: string } {
  const pems = selfsigned.generate(
    [{ name: 'commonName', value: 'kube-sim' }],
    {
      days: 30,
      keySize: 2048,
      algorithm: 'sha256',
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
    },
  );
  return { key: pems.private, cert: pems.cert };
}
