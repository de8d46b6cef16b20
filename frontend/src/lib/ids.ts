// ducklm ids are "<kind>_<32 hex digits of a UUIDv7>". The leading hex digits
// are a timestamp shared by ids made close together, so a short form keeps
// the kind and the random tail, which is what tells two ids apart.

const TAIL = 8;

/** shortId shortens "run_0190f0e3…c2a47b3d" to "run_…c2a47b3d"; short or foreign ids pass through. */
export function shortId(id: string): string {
  const cut = id.indexOf('_');
  if (cut > 0) {
    const kind = id.slice(0, cut);
    const body = id.slice(cut + 1);
    if (body.length <= TAIL + 1) return id;
    return `${kind}_…${body.slice(-TAIL)}`;
  }
  if (id.length <= 2 * TAIL + 1) return id;
  return `${id.slice(0, TAIL)}…${id.slice(-TAIL)}`;
}
