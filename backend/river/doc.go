// Package river runs deliberation branches as jobs of a work queue on the
// team's PostgreSQL, through River (github.com/riverqueue/river, driver
// riverpgxv5): Queue stands in for the in-process branch evaluator of
// backend/deliberation, and Worker is a process's membership of the queue
// (`ducklm worker`). Jobs carry the branch request with an idempotency key,
// so a job River runs again after its worker died records its branch once.
//
// It owns River's tables (its own migration line, beside goose's) and the
// job kinds; it decides nothing about searches and holds no policy.
package river
