// Test setup: a busy CI machine can be slow to settle, so async queries
// wait a little longer than Testing Library's default second.
import { configure } from '@testing-library/dom';

configure({ asyncUtilTimeout: 4000 });
