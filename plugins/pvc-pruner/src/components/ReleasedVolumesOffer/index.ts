export { ReleasedVolumesOffer } from './ReleasedVolumesOffer';
export type { ReleasedVolumesOfferProps } from './ReleasedVolumesOffer';
