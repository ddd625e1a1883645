import { PropsWithChildren } from 'react';
import { act, renderHook, waitFor } from '@testing-library/react';
import { TestApiProvider } from '@backstage/test-utils';
import { pvcPrunerApiRef } from '../api/PvcPrunerApi';
import { FakePvcPrunerApi } from '../__testUtils__/FakePvcPrunerApi';
import { makeResponse } from '../__testUtils__/fixtures';
import { ORPHANS_REFRESH_MS, useOrphans } from './useOrphans';

function setVisibility(state: DocumentVisibilityState) {
  Object.defineProperty(document, 'visibilityState', {
    configurable: true,
    get: () => state,
  });
}

describe('useOrphans', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => {
    jest.useRealTimers();
    setVisibility('visible');
  });

  it('re-scans every ORPHANS_REFRESH_MS while the page is visible, keeping the last answer meanwhile', async () => {
    const api = new FakePvcPrunerApi();
    let scans = 0;
    let answerNext: () => void = () => {};
    api.orphans = () => {
      scans += 1;
      if (scans === 1) return Promise.resolve(makeResponse([]));
      return new Promise(resolve => {
        answerNext = () => resolve(makeResponse([]));
      });
    };
    const wrapper = ({ children }: PropsWithChildren) => (
      <TestApiProvider apis={[[pvcPrunerApiRef, api]]}>
        {children}
      </TestApiProvider>
    );
    const { result } = renderHook(
      () => useOrphans('component:default/orders'),
      {
        wrapper,
      },
    );
    await waitFor(() => expect(result.current.value).toBeDefined());
    const first = result.current.value;
    expect(scans).toBe(1);

    await act(async () => {
      jest.advanceTimersByTime(ORPHANS_REFRESH_MS);
    });
    expect(scans).toBe(2);
    // Still loading the second scan: the first answer stays on screen.
    expect(result.current.value).toBe(first);
    // A scan in flight is not started again.
    await act(async () => {
      jest.advanceTimersByTime(ORPHANS_REFRESH_MS);
    });
    expect(scans).toBe(2);
    await act(async () => answerNext());
    await waitFor(() => expect(result.current.value).not.toBe(first));

    // A hidden tab does not scan.
    setVisibility('hidden');
    await act(async () => {
      jest.advanceTimersByTime(3 * ORPHANS_REFRESH_MS);
    });
    expect(scans).toBe(2);
    setVisibility('visible');
    await act(async () => {
      jest.advanceTimersByTime(ORPHANS_REFRESH_MS);
    });
    expect(scans).toBe(3);
  });
});
