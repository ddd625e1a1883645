import { DECODED_KINDS, FieldSpec, MESSAGES, messageForKind } from './schema';
import {
  ProtobufError,
  readFields,
  signed,
  WIRE_BYTES,
  WIRE_VARINT,
  WireField,
} from './wire';

/** The 4-byte prefix of Kubernetes' protobuf encoding. */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

/** A well-formed body whose kind kube-sim has no decoder for. */
export class UnsupportedProtobufKind extends Error {
  constructor(readonly apiVersion: string, readonly kind: string) {
    super(
      `kube-sim decodes protobuf for ${DECODED_KINDS.join(
        ', ',
      )} and DeleteOptions, not ${apiVersion} ${kind}; send it as application/json`,
    );
  }
}

type Json = Record<string, unknown>;

const utf8 = (field: WireField) => field.bytes!.toString('utf8');

function isZero(value: unknown): boolean {
  if (value === '' || value === false || value === 0 || value === undefined)
    return true;
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 0
  );
}

/** metav1.Time: an empty message is the zero time (JSON null); JSON carries whole seconds. */
function decodeTime(bytes: Buffer): string | undefined {
  let seconds = 0;
  let present = false;
  for (const f of readFields(bytes)) {
    present = true;
    if (f.number === 1 && f.wireType === WIRE_VARINT)
      seconds = signed(f.varint!);
  }
  if (!present) return undefined;
  // metav1.Time's range: 0001-01-01 to 9999-12-31.
  if (seconds < -62135596800 || seconds > 253402300799)
    throw new ProtobufError(`time ${seconds} s is out of range`);
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function decodeQuantity(bytes: Buffer): string {
  let text = '';
  for (const f of readFields(bytes))
    if (f.number === 1 && f.wireType === WIRE_BYTES) text = utf8(f);
  return text;
}

/** intstr.IntOrString: type 0 is intVal, type 1 is strVal. */
function decodeIntOrString(bytes: Buffer): number | string {
  let type = 0;
  let intVal = 0;
  let strVal = '';
  for (const f of readFields(bytes)) {
    if (f.number === 1 && f.wireType === WIRE_VARINT) type = signed(f.varint!);
    if (f.number === 2 && f.wireType === WIRE_VARINT)
      intVal = signed(f.varint!);
    if (f.number === 3 && f.wireType === WIRE_BYTES) strVal = utf8(f);
  }
  return type === 1 ? strVal : intVal;
}

function wireTypeOf(type: string): number {
  return type === 'bool' || type === 'int' ? WIRE_VARINT : WIRE_BYTES;
}

function decodeValue(
  spec: FieldSpec,
  field: WireField,
  where: string,
): unknown {
  switch (spec.type) {
    case 'string':
      return utf8(field);
    case 'bytes':
      return field.bytes!.toString('base64');
    case 'bool':
      return field.varint !== 0n;
    case 'int':
      return signed(field.varint!);
    case 'time':
      return decodeTime(field.bytes!);
    case 'quantity':
      return decodeQuantity(field.bytes!);
    case 'intOrString':
      return decodeIntOrString(field.bytes!);
    default:
      return decodeMessage(spec.type, field.bytes!, where);
  }
}

/** A map<string, T> entry: key 1, value 2. */
function decodeMapEntry(
  spec: FieldSpec,
  bytes: Buffer,
  where: string,
): [string, unknown] {
  let key = '';
  let value: unknown = '';
  for (const f of readFields(bytes)) {
    if (f.number === 1 && f.wireType === WIRE_BYTES) key = utf8(f);
    if (f.number === 2) {
      if (f.wireType !== wireTypeOf(spec.type))
        throw new ProtobufError(`${where}: wrong wire type ${f.wireType}`);
      value = decodeValue(spec, f, where);
    }
  }
  return [key, value];
}

function decodeMessage(name: string, bytes: Buffer, where = name): Json {
  const fields = MESSAGES[name];
  const out: Json = {};
  for (const field of readFields(bytes)) {
    const spec = fields[field.number];
    if (!spec) continue;
    const path = `${where}.${spec.json || name}`;
    if (field.wireType !== wireTypeOf(spec.map ? 'map' : spec.type))
      throw new ProtobufError(
        `${path}: wrong wire type ${field.wireType} for field ${field.number}`,
      );
    if (spec.map) {
      const [key, value] = decodeMapEntry(spec, field.bytes!, path);
      out[spec.json] = { ...(out[spec.json] as Json), [key]: value };
    } else if (spec.inline) {
      Object.assign(out, decodeMessage(spec.type, field.bytes!, where));
    } else if (spec.repeated) {
      const value = decodeValue(spec, field, path);
      out[spec.json] = [...((out[spec.json] as unknown[]) ?? []), value];
    } else {
      const value = decodeValue(spec, field, path);
      if (value === undefined || (!spec.keep && isZero(value)))
        delete out[spec.json];
      else out[spec.json] = value;
    }
  }
  return out;
}

/**
 * Decodes a body in Kubernetes' protobuf encoding: the `k8s\0` magic, then a
 * runtime.Unknown {typeMeta{apiVersion, kind}, raw, contentEncoding,
 * contentType} whose raw is the object's own message. Returns the object
 * as its JSON form.
 */
export function decodeKubernetesProtobuf(body: Buffer): Json {
  if (body.length < 4 || !body.subarray(0, 4).equals(PROTOBUF_MAGIC))
    throw new ProtobufError('the body does not start with the k8s\\0 magic');
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = Buffer.alloc(0);
  let contentEncoding = '';
  let contentType = '';
  for (const f of readFields(body.subarray(4))) {
    if (f.wireType !== WIRE_BYTES) continue;
    if (f.number === 1) {
      for (const t of readFields(f.bytes!)) {
        if (t.wireType !== WIRE_BYTES) continue;
        if (t.number === 1) apiVersion = utf8(t);
        if (t.number === 2) kind = utf8(t);
      }
    }
    if (f.number === 2) raw = f.bytes!;
    if (f.number === 3) contentEncoding = utf8(f);
    if (f.number === 4) contentType = utf8(f);
  }
  if (contentEncoding)
    throw new ProtobufError(
      `unsupported content encoding "${contentEncoding}"`,
    );
  if (contentType && contentType !== PROTOBUF_CONTENT_TYPE)
    throw new ProtobufError(`unsupported raw content type "${contentType}"`);
  if (!kind) throw new ProtobufError('the envelope names no kind');
  const message = messageForKind(apiVersion, kind);
  if (!message) throw new UnsupportedProtobufKind(apiVersion, kind);
  return { apiVersion, kind, ...decodeMessage(message, raw) };
}
