export {
  authProviderOf,
  ClusterAuth,
  CLIENT_SIDE_PROVIDERS,
  userTokenKeyOf,
} from './ClusterAuth';
export { requestAuthFromHeaders } from './requestAuthFromHeaders';
