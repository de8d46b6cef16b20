package store

// payloadDict1 is the preset dictionary of payload encoding 1: ducklm's own
// vocabulary, as it appears in the events ducklm writes (the JSON keys of
// backend/runtime's, backend/memory's and backend/world's payloads, enum
// values, the router's and the critic's fixed sentences), so that a small
// payload encodes as references into it. It holds no user's data.
//
// It may NEVER change once released: every payload written with it must
// read back, byte for byte, for as long as a database holds one. A better
// dictionary is a new constant with a new id (payloadDictID + 1), added to
// the decoder beside this one; the encoder then uses the new one.
//
// Order matters a little: zstd reaches the end of the dictionary with the
// shortest offsets, so the shapes written most (a step's start and result)
// come last.
const payloadDict1 = `` +
	// World runs and simulations.
	`{"run":{"id":"run_0","worldId":"wld_0","status":"running","worldLocalTime":0,"parentTime":0,"deliberationIndex":0,"baseRunId":"run_0","baseSeq":0,"latestCheckpointId":"ckp_0","error":"","createdAt":"","updatedAt":""},"state":{},"emitted":[],"done":false}` +
	`{"action":{},"stateDigest":"sha256:","emitted":0,"done":true}` +
	`{"id":"frk_0","parentWorldId":"wld_0","parentRunId":"run_0","checkpointId":"ckp_0","childWorldId":"wld_0","divergence":"","delta":{"actions":[],"seed":null,"program":null},"seedPolicy":""}` +
	`{"id":"wld_0","name":"","domain":"","initialState":{},"params":{},"seed":0,"parentWorldId":"wld_0","forkId":"frk_0","createdAt":""}` +
	`"world.initialized""world.step""world.event""world.checkpoint""world.forked""world.completed""world.failed"` +
	`{"kind":"","value":0,"drew":0,"note":"","signal":"","strategy":"","budget":0,"depth":0,"chosen":0,"candidates":[],"hasScore":false,"score":0}` +
	// Tools' outputs.
	`{"url":"https://","final_url":"https://","fetched_at":"","status":200,"method":"GET","text_kind":"text/html","text_truncated":false,"title":"","text":""}` +
	`{"server":"","tool":"","readOnlyHint":true,"safe":false,"network":false}` +
	`{"world":"wld_0","run":"run_0","events":[],"matches":[],"total":0,"offset":0,"next":0}` +
	`{"path":"","bytes":0,"sha256":"","written":true,"created":false}` +
	`{"command":"","stdoutTail":"","stderrTail":"","filesChanged":[],"stdout":{"digest":"sha256:","size":0,"mediaType":"text/plain"},"stderr":{"digest":"sha256:","size":0,"mediaType":"text/plain"}}` +
	`"shell_exec""web_fetch""world_sim""world_search""browser""coder"` +
	// Memory: the write policy's table, inputs and decisions.
	`{"digest":"sha256:","table":{"criticShare":0.7,"minRunes":8,"maxRunes":4000,"maxSecretShare":0.5,"types":{"fact":{"minWorth":0.7,"mergeSimilarity":0.92},"hypothesis":{"minWorth":0.4,"mergeSimilarity":0.95},"observation":{"minWorth":0.5,"mergeSimilarity":0.96},"preference":{"minWorth":0.3,"mergeSimilarity":0.9},"procedure":{"minWorth":0.6,"mergeSimilarity":0.92}}}}` +
	`{"stage":"","reason":"","code":"","contentHash":"sha256:","embeddingModel":"ducklm-hash-256","source":{"runId":"run_0","eventId":"evt_0","reality":"external_real","worldId":"wld_0"},"generation":0,"indexed":0,"stale":0}` +
	`"too_short""too_long""world_local_without_world""mostly_secret""below_min_worth""invalid_input""near_duplicate""exact_duplicate"` +
	`the text has  characters, fewer than the  a memory needs` +
	`the text has  characters, more than the  a memory may have` +
	`a world-local result must name its world to be kept as a hypothesis` +
	`the text is mostly secret (% of its words, at most % may be redacted)` +
	`worth  (critic , runtime weight ) is below the  a  needs` +
	` is  similar (a  merges at ); merged, keeping both provenances` +
	`the same text is already stored as mem_0; merged, keeping both provenances` +
	`worth  reaches the  a  needs, and nothing stored is as similar as ` +
	`{"input":{"criticScore":0.9,"memoryType":"observation","runtimeWeight":0.5,"reality":"world_local","worldId":"wld_0","textRunes":0,"dedup":{"exactMatch":false,"nearestSimilarity":0,"nearestId":"mem_0"},"safety":{"secretsFound":[],"secretShare":0,"redactable":true}},"tableDigest":"sha256:","decision":{"action":"store","rule":"new","reason":"","redact":false,"storeAs":"observation","mergeInto":"mem_0","worth":0.8},"memoryId":"mem_0","skipped":""}` +
	`{"action":"merge","rule":"exact_duplicate","redact":false,"storeAs":"fact","worth":0.7}{"action":"skip","rule":"new","storeAs":"procedure"}"hypothesis""preference"` +
	// Runs: the request, plans, approvals, answers.
	`{"task":"","plan":{"nodes":[{"id":"","kind":"tool","tool":"shell_exec","args":{"command":""},"depends_on":[],"title":"","retry_on_timeout":true}]},"approvalMode":"auto_sandboxed","models":{"planner":"","coder":"","critic":"","answer":""},"workspace":"","workspaceId":{"path":"","dev":0,"inode":0},"limits":{"timeout":120000000000,"memoryBytes":1073741824,"cpuSeconds":120,"fileBytes":268435456,"outputBytes":1048576,"processes":256},"maxSteps":100,"maxPlanSteps":100,"maxReplans":2,"maxStepReplans":1,"maxRetries":1,"concurrency":1,"review":true,"maxReviews":4,"criticThreshold":0.5,"allowedHosts":[],"owner":{"id":"inst_0","host":""}}` +
	`"ask_always""auto_sandboxed""auto_all""request""explicit""offline""model"` +
	`{"graph":{"nodes":[]},"graphFrom":"request","model":"","attempt":1,"source":"model","kept":[],"revision":0,"review":0,"search":""}` +
	`{"round":1,"failed":[],"kept":[],"rule":"","reason":""}` +
	`{"text":"","cites":[],"model":"","review":0,"reason":""}` +
	`{"attempt":1,"revision":0,"review":0,"model":"","options":{"temperature":0,"num_ctx":8192},"answer":"","normalised":[],"error":"","accepted":true,"unstreamed":true}` +
	`{"error":"","attempt":1,"raw":""}` +
	`{"requestId":"apr_0","step":"","tool":"","args":{},"rule":"","risk":"high","why":"","network":false,"sandboxed":false,"limits":{},"inDoubt":true,"untrusted":[],"mcp":{}}` +
	`{"requestId":"apr_0","step":"","idempotencyKey":"","args":{},"network":false,"allowHost":true,"reason":"","by":"ui"}"cli"` +
	`{"step":"","language":"python","blob":{"digest":"sha256:","size":0,"mediaType":"text/x-python"},"source":"","model":""}` +
	`{"status":"paused","reason":"","needsModel":true}{"status":"awaiting_approval"}{"status":"pending"}{"status":"terminated"}{"status":"failed"}` +
	`{"reason":"","response":""}{"cause":"cancelled","steps":[]}"no_plan""step_limit""bad_step"` +
	`{"step":"","attempt":1,"reason":"","delayMs":1000}` +
	`"low""medium""sandbox""hosts""web_worker""placement":{"workers":[],"branches":[],"here":true}` +
	`{"checkpointId":"ckp_0","seq":0}` +
	// The router's and the critic's sentences.
	`The run was cancelled.The run has finished; there is nothing left to do.The task is answered.` +
	`The plan is invalid, so the planner tries again (replan  of ).The plan is still invalid after  replans: ` +
	`Start Ollama with a model, or fork the run before the step with an edited plan.` +
	`The plan was being revised after failed steps, so  is asked for the revised plan again.` +
	`There is no valid plan after  replans.The task has no plan yet, so  plans it.` +
	`The task has no plan yet; the chosen planner  is not installed in Ollama (ollama pull ), so  plans it.` +
	`The run has started  steps, more than its limit of .The run reached its limit of  steps with steps still to run.` +
	`Waiting for  running steps.Waiting for the user's approval.` +
	`Fork the run before the step with an edited plan to try another way.` +
	`The run cannot go on: you denied , and ducklm does not plan around a no. ` +
	`, so  revises the plan around , keeping the finished steps (revision  of ).` +
	`The results were being reviewed, so  is asked again (review  of ).` +
	`The run ends without an answer: it reviewed its results  times, its limit, and each review asked for more steps. ` +
	`Every step of the plan is done, so  reads their results to answer the task (review  of ).` +
	` and is safe to run again, so it runs again after  s (retry  of ).` +
	`the critic scored it , below the run's threshold of ` +
	`The task has no plan yet and no planner model is available, so the offline planner plans it.` +
	`{"source":"planner","decision":{"type":"plan","payload":{"graphFrom":"request","source":"explicit"},"requires_permission":false,"confidence":1,"reason":"the task is an explicit plan"}}` +
	`{"source":"router","decision":{"type":"complete","payload":{},"requires_permission":false,"confidence":1,"reason":"Every step of the plan is done."}}` +
	`"type":"respond""type":"replan""type":"store_memory""type":"request_permission""type":"fail""type":"review""type":"retry""type":"coder"` +
	` needs a new approval because . needs approval in mode : , which rule  rates  risk.` +
	`Step \" is ready, so the coder writes its script with .Step \" is ready, but no coder model is available.Step \" has kind \", which cannot run.` +
	`{"score":0.2,"explanation":"The step failed with exit code  and could not do its work: \"\".","source":"model","model":"","normalised":[],"decision":"replan"}` +
	`The step timed out after  s, so its result is incomplete at best.` +
	`The step failed with exit code  and reported \"\".` +
	`The step failed with exit code  without an error message, so part of its work may have happened.` +
	`The step succeeded and produced output, with a message on stderr: \"\".` +
	`The step succeeded but produced no output, so there is little to show it did what the task needed.` +
	` Its output was cut at the output limit, so part of it is missing.` +
	` The critic model was not used (): this is a rule of thumb over the exit status and output, not a judgement of the result.` +
	// A step's start and result, written most.
	`"stdoutTail":"","stderrTail":"","filesChanged":[],"error":"","retryable":true,"hosts":[],"privateHosts":[],"confinement":"sandbox"` +
	`{"path":"","bytes":0,"sha256":"","content":"","encoding":"utf-8","truncated":false}` +
	`{"step":"","attempt":1,"tool":"file_write","args":{"path":"","content":""},"sandboxed":true,"network":false,"decision":{"type":"tool","payload":{"step":"","tool":"file_write","network":false},"requires_permission":false,"confidence":1,"reason":"Step \"\" is ready, so file_write runs it."}}` +
	`{"step":"","attempt":1,"ok":true,"exitCode":0,"timedOut":false,"truncated":false,"durationMs":0,"output":{},"sandboxed":true,"confinement":"workspace","critique":{"score":0.9,"explanation":"The step succeeded and produced output.","source":"heuristic","modelError":"no critic model is available","decision":"noop"},"checkpointId":"ckp_0","memory":{"input":{"criticScore":0.9,"memoryType":"observation","runtimeWeight":0.5,"textRunes":0,"dedup":{"exactMatch":true,"nearestSimilarity":1},"safety":{"secretShare":0,"redactable":true}},"memoryId":"mem_0"}}` +
	`{"step":"","attempt":1,"tool":"file_read","args":{"path":""},"sandboxed":true,"network":false,"decision":{"type":"tool","payload":{"step":"","tool":"file_read","network":false},"requires_permission":false,"confidence":1,"reason":"Step \"\" is ready, so file_read runs it."}}`

// payloadDictID names payloadDict1 in the frames written with it.
const payloadDictID = 1
