/** A protobuf body that cannot be read; the server answers it with a 400. */
export class ProtobufError extends Error {}

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

export interface WireField {
  number: number;
  wireType: number;
  /** Set for varints. */
  varint?: bigint;
  /** Set for length-delimited fields. */
  bytes?: Buffer;
}

/** Bounds-checked reads from one buffer. */
class Reader {
  private pos = 0;

  constructor(private readonly buf: Buffer) {}

  get done() {
    return this.pos >= this.buf.length;
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.done) throw new ProtobufError('unexpected end of data');
      const byte = this.buf[this.pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
    throw new ProtobufError('varint is longer than 10 bytes');
  }

  take(length: bigint | number): Buffer {
    if (BigInt(length) > BigInt(this.buf.length - this.pos))
      throw new ProtobufError('unexpected end of data');
    const slice = this.buf.subarray(this.pos, this.pos + Number(length));
    this.pos += Number(length);
    return slice;
  }
}

/** Reads the fields of one protobuf message, in order. */
export function* readFields(buf: Buffer): Generator<WireField> {
  const reader = new Reader(buf);
  while (!reader.done) {
    const key = reader.varint();
    const number = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (number < 1 || number > 0x1fffffff)
      throw new ProtobufError(`illegal field number ${number}`);
    switch (wireType) {
      case WIRE_VARINT:
        yield { number, wireType, varint: reader.varint() };
        break;
      case WIRE_BYTES:
        yield { number, wireType, bytes: reader.take(reader.varint()) };
        break;
      case WIRE_FIXED64:
      case WIRE_FIXED32:
        reader.take(wireType === WIRE_FIXED64 ? 8 : 4);
        yield { number, wireType };
        break;
      default:
        throw new ProtobufError(
          `unsupported wire type ${wireType} for field ${number}`,
        );
    }
  }
}

/** A varint as a signed 64-bit number (int32 and int64 fields). */
export function signed(value: bigint): number {
  return Number(BigInt.asIntN(64, value));
}
