import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  decodeKubernetesProtobuf,
  ProtobufError,
  UnsupportedProtobufKind,
} from '.';

/** Bodies kubectl 1.32 sent (recorded by test/fixtures/protobuf/capture.ts) and the objects they hold. */
const FIXTURES = join(__dirname, '../../../test/fixtures/protobuf');
const captured = readdirSync(FIXTURES)
  .filter(f => f.endsWith('.pb'))
  .map(f => f.replace(/\.pb$/, ''));

// A minimal encoder, to build bodies kubectl does not send.
const varint = (n: number): number[] => {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  return [...out, v];
};
const bytesField = (no: number, body: Buffer | string) => {
  const b = Buffer.from(body);
  return Buffer.from([...varint((no << 3) | 2), ...varint(b.length), ...b]);
};
const varintField = (no: number, value: number) =>
  Buffer.from([...varint(no << 3), ...varint(value)]);
const envelope = (apiVersion: string, kind: string, raw: Buffer) =>
  Buffer.concat([
    Buffer.from('k8s\0', 'latin1'),
    bytesField(
      1,
      Buffer.concat([bytesField(1, apiVersion), bytesField(2, kind)]),
    ),
    bytesField(2, raw),
  ]);
const namespaceRaw = (...metadata: Buffer[]) =>
  bytesField(1, Buffer.concat(metadata));

describe('decodeKubernetesProtobuf', () => {
  it('has captured kubectl bodies to check', () => {
    expect(captured).toEqual(
      expect.arrayContaining([
        'create-namespace',
        'debug-copy',
        'debug-replace-2',
      ]),
    );
  });

  it.each(captured)('decodes what kubectl sent: %s', name => {
    const body = readFileSync(join(FIXTURES, `${name}.pb`));
    const expected = JSON.parse(
      readFileSync(join(FIXTURES, `${name}.json`), 'utf8'),
    );
    expect(decodeKubernetesProtobuf(body)).toEqual(expected);
  });

  it('skips fields it does not know, of every wire type', () => {
    const meta = Buffer.concat([
      bytesField(1, 'team-b'),
      varintField(99, 7),
      bytesField(98, 'ignored'),
      Buffer.from([...varint((97 << 3) | 1), 1, 2, 3, 4, 5, 6, 7, 8]), // fixed64
      Buffer.from([...varint((96 << 3) | 5), 1, 2, 3, 4]), // fixed32
    ]);
    expect(
      decodeKubernetesProtobuf(envelope('v1', 'Namespace', namespaceRaw(meta))),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-b' },
    });
  });

  it('keeps explicit zeros of pointer fields and drops those of value fields', () => {
    const spec = Buffer.concat([
      bytesField(5, ''), // storageClassName: "" means no class
      bytesField(3, ''), // volumeName: "" is unset
    ]);
    const raw = Buffer.concat([
      bytesField(1, bytesField(1, 'c')),
      bytesField(2, spec),
    ]);
    expect(
      decodeKubernetesProtobuf(envelope('v1', 'PersistentVolumeClaim', raw)),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'c' },
      spec: { storageClassName: '' },
    });
  });

  it('reads times, quantities and inlined volume sources', () => {
    const created = bytesField(8, varintField(1, 1764576000));
    const volume = Buffer.concat([
      bytesField(1, 'scratch'),
      bytesField(2, bytesField(2, '')), // emptyDir: {}
    ]);
    const limits = bytesField(
      8,
      bytesField(
        1,
        Buffer.concat([
          bytesField(1, 'memory'),
          bytesField(2, bytesField(1, '64Mi')),
        ]),
      ),
    );
    const container = Buffer.concat([bytesField(1, 'c'), limits]);
    const raw = Buffer.concat([
      bytesField(1, Buffer.concat([bytesField(1, 'p'), created])),
      bytesField(
        2,
        Buffer.concat([bytesField(1, volume), bytesField(2, container)]),
      ),
    ]);
    expect(decodeKubernetesProtobuf(envelope('v1', 'Pod', raw))).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', creationTimestamp: '2025-12-01T08:00:00Z' },
      spec: {
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [{ name: 'c', resources: { limits: { memory: '64Mi' } } }],
      },
    });
  });

  it.each([
    ['no magic', Buffer.from('{"kind":"Namespace"}')],
    [
      'a truncated body',
      readFileSync(join(FIXTURES, 'debug-copy.pb')).subarray(0, 120),
    ],
    [
      'a length beyond the body',
      Buffer.concat([
        Buffer.from('k8s\0', 'latin1'),
        Buffer.from([0x12, 0xff, 0x01, 0x00]),
      ]),
    ],
    [
      'a string field sent as a varint',
      envelope('v1', 'Namespace', namespaceRaw(varintField(1, 5))),
    ],
    [
      'an envelope without a kind',
      Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytesField(2, '')]),
    ],
    [
      'an endless varint',
      Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.alloc(12, 0xff)]),
    ],
    [
      'a time out of range',
      envelope(
        'v1',
        'Namespace',
        namespaceRaw(bytesField(8, varintField(1, 2 ** 50))),
      ),
    ],
    [
      'a gzip-encoded raw object',
      Buffer.concat([
        envelope('v1', 'Namespace', namespaceRaw(bytesField(1, 'x'))),
        bytesField(3, 'gzip'),
      ]),
    ],
  ])('rejects %s as malformed', (_, body) => {
    expect(() => decodeKubernetesProtobuf(body)).toThrow(ProtobufError);
  });

  it('names the kinds it decodes when a kind has no decoder', () => {
    expect(() =>
      decodeKubernetesProtobuf(
        envelope('apps/v1', 'StatefulSet', Buffer.alloc(0)),
      ),
    ).toThrow(UnsupportedProtobufKind);
    expect(() =>
      decodeKubernetesProtobuf(
        envelope('apps/v1', 'StatefulSet', Buffer.alloc(0)),
      ),
    ).toThrow(
      /decodes protobuf for Namespace, Pod, .*not apps\/v1 StatefulSet/,
    );
  });
});
