import { useCallback, useEffect, useMemo, useState } from 'react';
import { useApi } from '@backstage/core-plugin-api';
import useAsyncFn from 'react-use/esm/useAsyncFn';
import { PruneJob, PruneJobPage } from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../api/PvcPrunerApi';

/** The entity's prune jobs, newest first, a page at a time. */
export interface JobHistoryState {
  jobs: PruneJob[];
  /** The first page has arrived. */
  loaded: boolean;
  loading: boolean;
  error?: Error;
  hasMore: boolean;
  loadMore: () => void;
  reload: () => void;
}

/** Loads the entity's prune jobs (newest first) and older pages on demand. */
export function useJobHistory(
  entityRef: string,
  pageSize = 10,
): JobHistoryState {
  const api = useApi(pvcPrunerApiRef);
  const [pages, setPages] = useState<PruneJobPage[]>([]);
  const [{ loading, error }, fetchPage] = useAsyncFn(
    async (cursor?: string) => {
      const page = await api.listJobs({ entityRef, limit: pageSize, cursor });
      setPages(previous => (cursor ? [...previous, page] : [page]));
      return page;
    },
    [api, entityRef, pageSize],
  );

  useEffect(() => {
    fetchPage();
  }, [fetchPage]);

  const jobs = useMemo(() => {
    const seen = new Set<string>();
    return pages
      .flatMap(p => p.items)
      .filter(job => !seen.has(job.id) && Boolean(seen.add(job.id)));
  }, [pages]);
  const nextCursor = pages[pages.length - 1]?.nextCursor;
  const loadMore = useCallback(() => {
    if (nextCursor) fetchPage(nextCursor);
  }, [fetchPage, nextCursor]);
  const reload = useCallback(() => {
    fetchPage();
  }, [fetchPage]);

  return {
    jobs,
    loaded: pages.length > 0,
    loading,
    error,
    hasMore: Boolean(nextCursor),
    loadMore,
    reload,
  };
}
