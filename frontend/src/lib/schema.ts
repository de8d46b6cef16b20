/** SchemaState compares the database's schema with the newest this ducklm knows. */
export type SchemaState = 'current' | 'behind' | 'ahead';

/** schemaState says whether the database is at, behind or ahead of this build's schema. */
export function schemaState(have: number, latest: number): SchemaState {
  if (have < latest) return 'behind';
  if (have > latest) return 'ahead';
  return 'current';
}
