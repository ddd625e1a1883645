/**
 * Writes JSON exactly as JSON.stringify does, but writes each object of
 * `parts` only once and reuses its text afterwards. The parts must never
 * change after they are first written: the watch cache's annotated
 * StatefulSet reports are such objects (a change to the cluster makes new
 * ones), and they are most of a card's answer, which every viewer asks for
 * again every 15 seconds.
 */
export class KeptJson {
  private readonly kept = new WeakMap<object, string>();

  stringify(value: unknown, parts: ReadonlySet<object>): string {
    return this.write(value, parts) ?? 'null';
  }

  private write(
    value: unknown,
    parts: ReadonlySet<object>,
  ): string | undefined {
    if (typeof value !== 'object' || value === null)
      return JSON.stringify(value);
    const kept = this.kept.get(value);
    if (kept !== undefined) return kept;
    let json: string;
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      json = JSON.stringify(value);
    } else if (Array.isArray(value)) {
      // Array.from, not map: a hole is written as null, as JSON.stringify does.
      json = `[${Array.from(
        value,
        item => this.write(item, parts) ?? 'null',
      ).join()}]`;
    } else if (parts.has(value)) {
      json = JSON.stringify(value);
    } else {
      const members: string[] = [];
      for (const [key, member] of Object.entries(value)) {
        const written = this.write(member, parts);
        if (written !== undefined)
          members.push(`${JSON.stringify(key)}:${written}`);
      }
      json = `{${members.join()}}`;
    }
    if (parts.has(value)) this.kept.set(value, json);
    return json;
  }
}
