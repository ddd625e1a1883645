import { describeKept } from './keptReasons';

const web = { name: 'web', ordinals: { start: 1, end: 4 } };

describe('describeKept', () => {
  it('names the ordinals the StatefulSet runs', () => {
    expect(
      describeKept(
        {
          name: 'data-web-2',
          uid: 'u',
          template: 'data',
          ordinal: 2,
          reason: 'ordinal-in-use',
        },
        web,
      ),
    ).toBe('ordinal 2 is one the StatefulSet runs (1–3)');
  });

  it('names every pod that mounts the claim, and which are terminating', () => {
    expect(
      describeKept(
        {
          name: 'data-web-5',
          uid: 'u',
          template: 'data',
          ordinal: 5,
          reason: 'mounted-by-pod',
          pods: [
            { name: 'web-5', terminating: true },
            { name: 'debug-shell', terminating: false },
          ],
        },
        web,
      ),
    ).toBe('mounted by pod web-5 (terminating), debug-shell');
  });

  it('quotes the part of the name that is not an ordinal', () => {
    expect(
      describeKept(
        {
          name: 'data-web-backup',
          uid: 'u',
          template: 'data',
          reason: 'not-an-ordinal',
        },
        web,
      ),
    ).toBe('"backup" after "data-web-" is not an ordinal of this StatefulSet');
  });
});
