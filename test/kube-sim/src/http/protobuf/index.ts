export {
  decodeKubernetesProtobuf,
  PROTOBUF_CONTENT_TYPE,
  UnsupportedProtobufKind,
} from './decode';
export { ProtobufError } from './wire';
