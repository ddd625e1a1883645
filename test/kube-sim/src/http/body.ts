import { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { errors } from '../errors';

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

export function parseBody(raw: Buffer, format: BodyFormat): unknown {
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
