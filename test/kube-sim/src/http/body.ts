import { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, errors } from '../errors';
import {
  decodeKubernetesProtobuf,
  PROTOBUF_CONTENT_TYPE,
  ProtobufError,
  UnsupportedProtobufKind,
} from './protobuf';

/** kube-apiserver caps request bodies at 3 MiB. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export async function readBody(
  req: IncomingMessage,
  limit = MAX_BODY_BYTES,
): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    throw errors.tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw errors.tooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export type BodyFormat =
  | 'json'
  | 'yaml'
  | 'protobuf'
  | 'merge-patch'
  | 'json-patch'
  | 'strategic-merge-patch'
  | 'apply-patch';

export function bodyFormat(contentType: string | undefined): BodyFormat {
  const type = (contentType ?? 'application/json')
    .split(';')[0]
    .trim()
    .toLowerCase();
  switch (type) {
    case '':
    case 'application/json':
      return 'json';
    case 'application/yaml':
    case 'application/x-yaml':
    case 'text/yaml':
      return 'yaml';
    case PROTOBUF_CONTENT_TYPE:
      return 'protobuf';
    case 'application/merge-patch+json':
      return 'merge-patch';
    case 'application/json-patch+json':
      return 'json-patch';
    case 'application/strategic-merge-patch+json':
      return 'strategic-merge-patch';
    case 'application/apply-patch+yaml':
      return 'apply-patch';
    default:
      throw errors.unsupportedMediaType(type);
  }
}

function parseProtobuf(raw: Buffer): unknown {
  try {
    return decodeKubernetesProtobuf(raw);
  } catch (e) {
    if (e instanceof UnsupportedProtobufKind)
      throw new ApiError(415, 'UnsupportedMediaType', e.message);
    if (e instanceof ProtobufError)
      throw errors.badRequest(
        `the body of the request could not be decoded as ${PROTOBUF_CONTENT_TYPE}: ${e.message}`,
      );
    throw e;
  }
}

export function parseBody(raw: Buffer, format: BodyFormat): unknown {
  if (format === 'protobuf') return parseProtobuf(raw);
  const text = raw.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return format === 'yaml' || format === 'apply-patch'
      ? parseYaml(text)
      : JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(
      `the body of the request could not be decoded as ${
        format === 'yaml' ? 'YAML' : 'JSON'
      }: ${(e as Error).message.split('\n')[0]}`,
    );
  }
}
