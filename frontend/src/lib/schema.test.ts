import { expect, it } from 'vitest';
import { schemaState } from './schema';

it('compares schema versions', () => {
  expect(schemaState(2, 2)).toBe('current');
  expect(schemaState(1, 2)).toBe('behind');
  expect(schemaState(3, 2)).toBe('ahead');
});
