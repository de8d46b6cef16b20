// Package deliberation lets a simulated world's run think before it acts: a
// round of deliberation searches real forks of one checkpoint of the parent
// run, within a budget, by a named strategy (beam search or Monte-Carlo tree
// search with UCT), ranks the first actions it tried by the scores their
// branches reached, records that it deliberated as one external-real fact,
// and may apply the best action to the parent; rounds repeat until the world
// is done (a receding horizon).
//
// Every explored branch is a fork (world.Service.Branch): a new world whose
// divergence is the actions it tried, whose events are world-local and
// carry the round as deliberation_index and the parent's world-local time
// when the round began as parent_time. Branches form a tree in the lineage:
// the first actions fork the parent's checkpoint, deeper ones fork the end of
// the branch above them. A branch is a hypothesis and is durable as a whole,
// in one commit, or not at all; the round's record commits after its
// branches, so a crash mid-round leaves whole branches and no record of the
// round.
//
// The package owns the search and the round's record. It must never step a
// branch itself (only through the Evaluator, the one seam where branches
// could run on other processes), never record a branch's result as an
// external-real fact, and never touch the parent run except to apply the
// chosen action when asked.
package deliberation
