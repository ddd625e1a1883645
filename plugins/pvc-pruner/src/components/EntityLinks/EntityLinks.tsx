import { Fragment } from 'react';
import { Link } from '@backstage/core-components';
import { useEntityKubernetesPath } from '../../hooks/useEntityKubernetesPath';

/** Props of {@link EntityLinks}. */
export interface EntityLinksProps {
  entityRefs: string[];
  /** At most this many are linked; the rest are counted ("and 3 more"). Default 10. */
  max?: number;
}

/**
 * Entity refs, each linked to its entity's Kubernetes tab: "a", "a and b",
 * "a, b and c", or "a, b and 12 more". Catalog authors choose how many
 * entities claim a StatefulSet, so the list is capped.
 */
export function EntityLinks(props: EntityLinksProps) {
  const { entityRefs, max = 10 } = props;
  const pathOf = useEntityKubernetesPath();
  const shown = entityRefs.slice(0, max);
  const more = entityRefs.length - shown.length;
  const separator = (i: number) => {
    const last = more > 0 ? shown.length : shown.length - 1;
    if (i === 0) return '';
    return i === last ? ' and ' : ', ';
  };
  return (
    <>
      {shown.map((ref, i) => (
        <Fragment key={ref}>
          {separator(i)}
          <Link to={pathOf(ref)}>{ref}</Link>
        </Fragment>
      ))}
      {more > 0 && `${separator(shown.length)}${more} more`}
    </>
  );
}
