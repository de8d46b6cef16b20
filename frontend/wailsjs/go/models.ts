export namespace api {
	
	export class AnswerInput {
	    runId: string;
	    requestId: string;
	    approve: boolean;
	    args: string;
	    network: boolean;
	    allowHost?: boolean;
	    reason: string;
	    idempotencyKey: string;
	
	    static createFrom(source: any = {}) {
	        return new AnswerInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.requestId = source["requestId"];
	        this.approve = source["approve"];
	        this.args = source["args"];
	        this.network = source["network"];
	        this.allowHost = source["allowHost"];
	        this.reason = source["reason"];
	        this.idempotencyKey = source["idempotencyKey"];
	    }
	}
	export class BundleReport {
	    file: string;
	    bytes: number;
	    ok: boolean;
	    problem?: string;
	    checks: bundle.Checks;
	    formatVersion: number;
	    appVersion: string;
	    // Go type: time
	    createdAt?: any;
	    roots: string[];
	    scope: bundle.Scope;
	    entries: number;
	    signed: boolean;
	    signer?: string;
	    trusted: boolean;
	    trust: string;
	    counts: bundle.Counts;
	    worlds: bundle.HeldWorld[];
	
	    static createFrom(source: any = {}) {
	        return new BundleReport(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.file = source["file"];
	        this.bytes = source["bytes"];
	        this.ok = source["ok"];
	        this.problem = source["problem"];
	        this.checks = this.convertValues(source["checks"], bundle.Checks);
	        this.formatVersion = source["formatVersion"];
	        this.appVersion = source["appVersion"];
	        this.createdAt = this.convertValues(source["createdAt"], null);
	        this.roots = source["roots"];
	        this.scope = this.convertValues(source["scope"], bundle.Scope);
	        this.entries = source["entries"];
	        this.signed = source["signed"];
	        this.signer = source["signer"];
	        this.trusted = source["trusted"];
	        this.trust = source["trust"];
	        this.counts = this.convertValues(source["counts"], bundle.Counts);
	        this.worlds = this.convertValues(source["worlds"], bundle.HeldWorld);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ImportResult {
	    report: BundleReport;
	    imported: boolean;
	    refused?: string;
	    problem?: string;
	    added: bundle.Counts;
	    updated: number;
	    alreadyPresent: boolean;
	    addedIds: string[];
	
	    static createFrom(source: any = {}) {
	        return new ImportResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.report = this.convertValues(source["report"], BundleReport);
	        this.imported = source["imported"];
	        this.refused = source["refused"];
	        this.problem = source["problem"];
	        this.added = this.convertValues(source["added"], bundle.Counts);
	        this.updated = source["updated"];
	        this.alreadyPresent = source["alreadyPresent"];
	        this.addedIds = source["addedIds"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class CopiedLineage {
	    root: string;
	    name: string;
	    domain: string;
	    import: ImportResult;
	    problem: string;
	
	    static createFrom(source: any = {}) {
	        return new CopiedLineage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.root = source["root"];
	        this.name = source["name"];
	        this.domain = source["domain"];
	        this.import = this.convertValues(source["import"], ImportResult);
	        this.problem = source["problem"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Created {
	    world: backend.WorldSpec;
	    run: backend.WorldRun;
	
	    static createFrom(source: any = {}) {
	        return new Created(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.world = this.convertValues(source["world"], backend.WorldSpec);
	        this.run = this.convertValues(source["run"], backend.WorldRun);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class DatabaseInput {
	    address: string;
	    password: string;
	
	    static createFrom(source: any = {}) {
	        return new DatabaseInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.address = source["address"];
	        this.password = source["password"];
	    }
	}
	export class LocalDataView {
	    path: string;
	    exists: boolean;
	    taskRuns: number;
	    simulatedWorlds: number;
	    roots: number;
	    unfinished: number;
	    problem: string;
	
	    static createFrom(source: any = {}) {
	        return new LocalDataView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.exists = source["exists"];
	        this.taskRuns = source["taskRuns"];
	        this.simulatedWorlds = source["simulatedWorlds"];
	        this.roots = source["roots"];
	        this.unfinished = source["unfinished"];
	        this.problem = source["problem"];
	    }
	}
	export class DatabaseView {
	    address: string;
	    passwordStored: boolean;
	    inUse: string;
	    shared: boolean;
	    override: string;
	    overrideAddress: string;
	    nextStart: string;
	    local?: LocalDataView;
	    canRestart: boolean;
	
	    static createFrom(source: any = {}) {
	        return new DatabaseView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.address = source["address"];
	        this.passwordStored = source["passwordStored"];
	        this.inUse = source["inUse"];
	        this.shared = source["shared"];
	        this.override = source["override"];
	        this.overrideAddress = source["overrideAddress"];
	        this.nextStart = source["nextStart"];
	        this.local = this.convertValues(source["local"], LocalDataView);
	        this.canRestart = source["canRestart"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class DatabaseSaved {
	    database: DatabaseView;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new DatabaseSaved(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.database = this.convertValues(source["database"], DatabaseView);
	        this.message = source["message"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class DatabaseTest {
	    ok: boolean;
	    message: string;
	    serverVersion: string;
	    schemaVersion: number;
	    latestSchemaVersion: number;
	
	    static createFrom(source: any = {}) {
	        return new DatabaseTest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ok = source["ok"];
	        this.message = source["message"];
	        this.serverVersion = source["serverVersion"];
	        this.schemaVersion = source["schemaVersion"];
	        this.latestSchemaVersion = source["latestSchemaVersion"];
	    }
	}
	
	export class DeliberateInput {
	    runId: string;
	    checkpointId: string;
	    strategy: string;
	    width: number;
	    depth: number;
	    budget: number;
	    seeds: number;
	    rounds: number;
	    untilDone: boolean;
	    apply: boolean;
	    timeLimitMs: number;
	    op: string;
	    onWorkers: number;
	
	    static createFrom(source: any = {}) {
	        return new DeliberateInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.checkpointId = source["checkpointId"];
	        this.strategy = source["strategy"];
	        this.width = source["width"];
	        this.depth = source["depth"];
	        this.budget = source["budget"];
	        this.seeds = source["seeds"];
	        this.rounds = source["rounds"];
	        this.untilDone = source["untilDone"];
	        this.apply = source["apply"];
	        this.timeLimitMs = source["timeLimitMs"];
	        this.op = source["op"];
	        this.onWorkers = source["onWorkers"];
	    }
	}
	export class ModelInfo {
	    host: string;
	    reachable: boolean;
	    error?: string;
	    models: string[];
	    sandboxed: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ModelInfo(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.host = source["host"];
	        this.reachable = source["reachable"];
	        this.error = source["error"];
	        this.models = source["models"];
	        this.sandboxed = source["sandboxed"];
	    }
	}
	export class EmbedderChoices {
	    current: string;
	    builtin: string;
	    preferred?: string;
	    ollama: ModelInfo;
	    embedding: string[];
	
	    static createFrom(source: any = {}) {
	        return new EmbedderChoices(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.current = source["current"];
	        this.builtin = source["builtin"];
	        this.preferred = source["preferred"];
	        this.ollama = this.convertValues(source["ollama"], ModelInfo);
	        this.embedding = source["embedding"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Example {
	    name: string;
	    source: string;
	
	    static createFrom(source: any = {}) {
	        return new Example(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.source = source["source"];
	    }
	}
	export class ExportInput {
	    root: string;
	    scope: string;
	    path: string;
	    replace: boolean;
	    op: string;
	
	    static createFrom(source: any = {}) {
	        return new ExportInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.root = source["root"];
	        this.scope = source["scope"];
	        this.path = source["path"];
	        this.replace = source["replace"];
	        this.op = source["op"];
	    }
	}
	export class ExportResult {
	    file: string;
	    bytes: number;
	    signer: string;
	    root: string;
	    scope: string;
	    counts: bundle.Counts;
	
	    static createFrom(source: any = {}) {
	        return new ExportResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.file = source["file"];
	        this.bytes = source["bytes"];
	        this.signer = source["signer"];
	        this.root = source["root"];
	        this.scope = source["scope"];
	        this.counts = this.convertValues(source["counts"], bundle.Counts);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ForkInput {
	    checkpointId: string;
	    parentRunId: string;
	    divergence: string;
	    delta: string;
	    seedPolicy: string;
	    name: string;
	    deliberationIndex: number;
	
	    static createFrom(source: any = {}) {
	        return new ForkInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.checkpointId = source["checkpointId"];
	        this.parentRunId = source["parentRunId"];
	        this.divergence = source["divergence"];
	        this.delta = source["delta"];
	        this.seedPolicy = source["seedPolicy"];
	        this.name = source["name"];
	        this.deliberationIndex = source["deliberationIndex"];
	    }
	}
	export class Forked {
	    fork: backend.Fork;
	    world: backend.WorldSpec;
	    run: backend.WorldRun;
	
	    static createFrom(source: any = {}) {
	        return new Forked(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.fork = this.convertValues(source["fork"], backend.Fork);
	        this.world = this.convertValues(source["world"], backend.WorldSpec);
	        this.run = this.convertValues(source["run"], backend.WorldRun);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ImportInput {
	    path: string;
	    allowUnsigned: boolean;
	    op: string;
	
	    static createFrom(source: any = {}) {
	        return new ImportInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.allowUnsigned = source["allowUnsigned"];
	        this.op = source["op"];
	    }
	}
	
	export class LocalCopy {
	    lineages: CopiedLineage[];
	    added: bundle.Counts;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new LocalCopy(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.lineages = this.convertValues(source["lineages"], CopiedLineage);
	        this.added = this.convertValues(source["added"], bundle.Counts);
	        this.message = source["message"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class MCPServerInput {
	    name: string;
	    command: string;
	    args: string[];
	    url: string;
	    network: boolean;
	    workspace: boolean;
	    private: boolean;
	
	    static createFrom(source: any = {}) {
	        return new MCPServerInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.command = source["command"];
	        this.args = source["args"];
	        this.url = source["url"];
	        this.network = source["network"];
	        this.workspace = source["workspace"];
	        this.private = source["private"];
	    }
	}
	export class MemoryListInput {
	    type: string;
	    reality: string;
	    runId: string;
	    limit: number;
	    before: string;
	
	    static createFrom(source: any = {}) {
	        return new MemoryListInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.type = source["type"];
	        this.reality = source["reality"];
	        this.runId = source["runId"];
	        this.limit = source["limit"];
	        this.before = source["before"];
	    }
	}
	export class MemorySearch {
	    query: string;
	    type: string;
	    reality: string;
	    runId: string;
	    k: number;
	
	    static createFrom(source: any = {}) {
	        return new MemorySearch(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.query = source["query"];
	        this.type = source["type"];
	        this.reality = source["reality"];
	        this.runId = source["runId"];
	        this.k = source["k"];
	    }
	}
	export class MemoryStatus {
	    model: string;
	    indexed: number;
	    stale: number;
	    loadedFrom: string;
	    loadTimeNs: number;
	    // Go type: memory
	    reindex?: any;
	    memories: number;
	    builtin: boolean;
	    preferred?: string;
	
	    static createFrom(source: any = {}) {
	        return new MemoryStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.model = source["model"];
	        this.indexed = source["indexed"];
	        this.stale = source["stale"];
	        this.loadedFrom = source["loadedFrom"];
	        this.loadTimeNs = source["loadTimeNs"];
	        this.reindex = this.convertValues(source["reindex"], null);
	        this.memories = source["memories"];
	        this.builtin = source["builtin"];
	        this.preferred = source["preferred"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class OpenRequest {
	    screen: string;
	    id?: string;
	    seq?: number;
	    other?: string;
	    section?: string;
	
	    static createFrom(source: any = {}) {
	        return new OpenRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.screen = source["screen"];
	        this.id = source["id"];
	        this.seq = source["seq"];
	        this.other = source["other"];
	        this.section = source["section"];
	    }
	}
	export class OpenRoute {
	    screen: string;
	    runId?: string;
	    select?: string;
	    seq?: number;
	    compare?: string[];
	    world?: boolean;
	    section?: string;
	
	    static createFrom(source: any = {}) {
	        return new OpenRoute(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.screen = source["screen"];
	        this.runId = source["runId"];
	        this.select = source["select"];
	        this.seq = source["seq"];
	        this.compare = source["compare"];
	        this.world = source["world"];
	        this.section = source["section"];
	    }
	}
	export class Opened {
	    route: OpenRoute;
	    error?: string;
	
	    static createFrom(source: any = {}) {
	        return new Opened(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.route = this.convertValues(source["route"], OpenRoute);
	        this.error = source["error"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class PlanCheck {
	    valid: boolean;
	    problems: string[];
	    steps: number;
	
	    static createFrom(source: any = {}) {
	        return new PlanCheck(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.valid = source["valid"];
	        this.problems = source["problems"];
	        this.steps = source["steps"];
	    }
	}
	export class ReindexInput {
	    model: string;
	    op: string;
	
	    static createFrom(source: any = {}) {
	        return new ReindexInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.model = source["model"];
	        this.op = source["op"];
	    }
	}
	export class RunDetail {
	    run: backend.WorldRun;
	    state?: runtime.RunState;
	    approvals: runtime.Approval[];
	    drivenElsewhere?: string;
	
	    static createFrom(source: any = {}) {
	        return new RunDetail(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.run = this.convertValues(source["run"], backend.WorldRun);
	        this.state = this.convertValues(source["state"], runtime.RunState);
	        this.approvals = this.convertValues(source["approvals"], runtime.Approval);
	        this.drivenElsewhere = source["drivenElsewhere"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Saved {
	    settings: settings.Settings;
	    ollamaHost: string;
	
	    static createFrom(source: any = {}) {
	        return new Saved(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.settings = this.convertValues(source["settings"], settings.Settings);
	        this.ollamaHost = source["ollamaHost"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Screenshot {
	    mediaType: string;
	    data: number[];
	
	    static createFrom(source: any = {}) {
	        return new Screenshot(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.mediaType = source["mediaType"];
	        this.data = source["data"];
	    }
	}
	export class SettingsCheck {
	    valid: boolean;
	    problems: settings.Problem[];
	
	    static createFrom(source: any = {}) {
	        return new SettingsCheck(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.valid = source["valid"];
	        this.problems = this.convertValues(source["problems"], settings.Problem);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class SettingsView {
	    settings: settings.Settings;
	    dataDir: string;
	    ollamaHost: string;
	    defaultHost: string;
	
	    static createFrom(source: any = {}) {
	        return new SettingsView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.settings = this.convertValues(source["settings"], settings.Settings);
	        this.dataDir = source["dataDir"];
	        this.ollamaHost = source["ollamaHost"];
	        this.defaultHost = source["defaultHost"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class StepInput {
	    runId: string;
	    action: string;
	    steps: number;
	    checkpointEvery: number;
	    onWorkers?: boolean;
	    op?: string;
	
	    static createFrom(source: any = {}) {
	        return new StepInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.action = source["action"];
	        this.steps = source["steps"];
	        this.checkpointEvery = source["checkpointEvery"];
	        this.onWorkers = source["onWorkers"];
	        this.op = source["op"];
	    }
	}
	export class TaskInput {
	    task: string;
	    plan: string;
	    approvalMode: string;
	    models: {[key: string]: string};
	    workspace: string;
	    createWorkspace?: boolean;
	    timeoutSeconds: number;
	    maxSteps: number;
	    maxPlanSteps?: number;
	    allowedHosts?: string[];
	    review?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new TaskInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.task = source["task"];
	        this.plan = source["plan"];
	        this.approvalMode = source["approvalMode"];
	        this.models = source["models"];
	        this.workspace = source["workspace"];
	        this.createWorkspace = source["createWorkspace"];
	        this.timeoutSeconds = source["timeoutSeconds"];
	        this.maxSteps = source["maxSteps"];
	        this.maxPlanSteps = source["maxPlanSteps"];
	        this.allowedHosts = source["allowedHosts"];
	        this.review = source["review"];
	    }
	}
	export class TrustedSigner {
	    fingerprint: string;
	    formatted: string;
	    note: string;
	
	    static createFrom(source: any = {}) {
	        return new TrustedSigner(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.fingerprint = source["fingerprint"];
	        this.formatted = source["formatted"];
	        this.note = source["note"];
	    }
	}
	export class TrustedSigners {
	    own: string;
	    ownFingerprint: string;
	    signers: TrustedSigner[];
	    file: string;
	
	    static createFrom(source: any = {}) {
	        return new TrustedSigners(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.own = source["own"];
	        this.ownFingerprint = source["ownFingerprint"];
	        this.signers = this.convertValues(source["signers"], TrustedSigner);
	        this.file = source["file"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class WorkersView {
	    shared: boolean;
	    workers: backend.Worker[];
	    heartbeatMs: number;
	    lostAfterMs: number;
	    // Go type: time
	    now: any;
	
	    static createFrom(source: any = {}) {
	        return new WorkersView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.shared = source["shared"];
	        this.workers = this.convertValues(source["workers"], backend.Worker);
	        this.heartbeatMs = source["heartbeatMs"];
	        this.lostAfterMs = source["lostAfterMs"];
	        this.now = this.convertValues(source["now"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class WorldDetail {
	    world: backend.WorldSpec;
	    run: backend.WorldRun;
	    runs: backend.WorldRun[];
	    fork?: backend.Fork;
	    checkpoints: backend.Checkpoint[];
	    state?: number[];
	    program?: string;
	    limits?: starlark.Limits;
	    stepping?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new WorldDetail(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.world = this.convertValues(source["world"], backend.WorldSpec);
	        this.run = this.convertValues(source["run"], backend.WorldRun);
	        this.runs = this.convertValues(source["runs"], backend.WorldRun);
	        this.fork = this.convertValues(source["fork"], backend.Fork);
	        this.checkpoints = this.convertValues(source["checkpoints"], backend.Checkpoint);
	        this.state = source["state"];
	        this.program = source["program"];
	        this.limits = this.convertValues(source["limits"], starlark.Limits);
	        this.stepping = source["stepping"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class WorldInput {
	    name: string;
	    program: string;
	    example: string;
	    seed: number;
	
	    static createFrom(source: any = {}) {
	        return new WorldInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.program = source["program"];
	        this.example = source["example"];
	        this.seed = source["seed"];
	    }
	}

}

export namespace backend {
	
	export class BlobRef {
	    digest: string;
	    size: number;
	    mediaType: string;
	
	    static createFrom(source: any = {}) {
	        return new BlobRef(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.digest = source["digest"];
	        this.size = source["size"];
	        this.mediaType = source["mediaType"];
	    }
	}
	export class Checkpoint {
	    id: string;
	    worldId: string;
	    runId: string;
	    worldLocalTime: number;
	    ledgerSeq: number;
	    blob: BlobRef;
	    // Go type: time
	    createdAt: any;
	
	    static createFrom(source: any = {}) {
	        return new Checkpoint(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.worldId = source["worldId"];
	        this.runId = source["runId"];
	        this.worldLocalTime = source["worldLocalTime"];
	        this.ledgerSeq = source["ledgerSeq"];
	        this.blob = this.convertValues(source["blob"], BlobRef);
	        this.createdAt = this.convertValues(source["createdAt"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Event {
	    id: string;
	    stream: string;
	    seq: number;
	    pos: number;
	    type: string;
	    schemaVersion: number;
	    payload: number[];
	    reality: string;
	    causationId?: string;
	    correlationId?: string;
	    // Go type: time
	    recordedAt: any;
	    parentTime: number;
	    deliberationIndex: number;
	    worldLocalTime: number;
	
	    static createFrom(source: any = {}) {
	        return new Event(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.stream = source["stream"];
	        this.seq = source["seq"];
	        this.pos = source["pos"];
	        this.type = source["type"];
	        this.schemaVersion = source["schemaVersion"];
	        this.payload = source["payload"];
	        this.reality = source["reality"];
	        this.causationId = source["causationId"];
	        this.correlationId = source["correlationId"];
	        this.recordedAt = this.convertValues(source["recordedAt"], null);
	        this.parentTime = source["parentTime"];
	        this.deliberationIndex = source["deliberationIndex"];
	        this.worldLocalTime = source["worldLocalTime"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class FolderID {
	    path: string;
	    dev: number;
	    inode: number;
	
	    static createFrom(source: any = {}) {
	        return new FolderID(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.dev = source["dev"];
	        this.inode = source["inode"];
	    }
	}
	export class Fork {
	    id: string;
	    parentWorldId: string;
	    parentRunId: string;
	    checkpointId: string;
	    childWorldId: string;
	    divergence: string;
	    delta: number[];
	    seedPolicy: string;
	    // Go type: time
	    createdAt: any;
	
	    static createFrom(source: any = {}) {
	        return new Fork(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.parentWorldId = source["parentWorldId"];
	        this.parentRunId = source["parentRunId"];
	        this.checkpointId = source["checkpointId"];
	        this.childWorldId = source["childWorldId"];
	        this.divergence = source["divergence"];
	        this.delta = source["delta"];
	        this.seedPolicy = source["seedPolicy"];
	        this.createdAt = this.convertValues(source["createdAt"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ForkSummary {
	    id: string;
	    divergence: string;
	    at: number;
	
	    static createFrom(source: any = {}) {
	        return new ForkSummary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.divergence = source["divergence"];
	        this.at = source["at"];
	    }
	}
	export class Limits {
	    timeout: number;
	    memoryBytes: number;
	    cpuSeconds: number;
	    fileBytes: number;
	    outputBytes: number;
	    processes: number;
	
	    static createFrom(source: any = {}) {
	        return new Limits(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.timeout = source["timeout"];
	        this.memoryBytes = source["memoryBytes"];
	        this.cpuSeconds = source["cpuSeconds"];
	        this.fileBytes = source["fileBytes"];
	        this.outputBytes = source["outputBytes"];
	        this.processes = source["processes"];
	    }
	}
	export class MCPTool {
	    server: string;
	    tool: string;
	    readOnlyHint?: boolean;
	    safe?: boolean;
	    network?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new MCPTool(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.server = source["server"];
	        this.tool = source["tool"];
	        this.readOnlyHint = source["readOnlyHint"];
	        this.safe = source["safe"];
	        this.network = source["network"];
	    }
	}
	export class RunSummary {
	    id: string;
	    status: string;
	    worldLocalTime: number;
	    deliberationIndex?: number;
	    stepping?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new RunSummary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.status = source["status"];
	        this.worldLocalTime = source["worldLocalTime"];
	        this.deliberationIndex = source["deliberationIndex"];
	        this.stepping = source["stepping"];
	    }
	}
	export class TaskNode {
	    id: string;
	    kind: string;
	    tool?: string;
	    args?: number[];
	    depends_on: string[];
	    title?: string;
	    retry_on_timeout?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new TaskNode(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.kind = source["kind"];
	        this.tool = source["tool"];
	        this.args = source["args"];
	        this.depends_on = source["depends_on"];
	        this.title = source["title"];
	        this.retry_on_timeout = source["retry_on_timeout"];
	    }
	}
	export class TaskGraph {
	    nodes: TaskNode[];
	
	    static createFrom(source: any = {}) {
	        return new TaskGraph(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.nodes = this.convertValues(source["nodes"], TaskNode);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class WorkerJob {
	    id: number;
	    kind: string;
	    runId: string;
	    label: string;
	    // Go type: time
	    startedAt: any;
	
	    static createFrom(source: any = {}) {
	        return new WorkerJob(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.kind = source["kind"];
	        this.runId = source["runId"];
	        this.label = source["label"];
	        this.startedAt = this.convertValues(source["startedAt"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Worker {
	    id: string;
	    host: string;
	    pid: number;
	    slots: number;
	    version: string;
	    // Go type: time
	    startedAt: any;
	    // Go type: time
	    heartbeatAt: any;
	    // Go type: time
	    stoppedAt: any;
	    state: string;
	    jobs: WorkerJob[];
	    done: number;
	
	    static createFrom(source: any = {}) {
	        return new Worker(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.host = source["host"];
	        this.pid = source["pid"];
	        this.slots = source["slots"];
	        this.version = source["version"];
	        this.startedAt = this.convertValues(source["startedAt"], null);
	        this.heartbeatAt = this.convertValues(source["heartbeatAt"], null);
	        this.stoppedAt = this.convertValues(source["stoppedAt"], null);
	        this.state = source["state"];
	        this.jobs = this.convertValues(source["jobs"], WorkerJob);
	        this.done = source["done"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class WorldSummary {
	    id: string;
	    name: string;
	    domain: string;
	    parent?: string;
	    // Go type: time
	    createdAt: any;
	    runs: number;
	    forks: number;
	    branches?: number;
	    latestRun?: RunSummary;
	    fork?: ForkSummary;
	
	    static createFrom(source: any = {}) {
	        return new WorldSummary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.domain = source["domain"];
	        this.parent = source["parent"];
	        this.createdAt = this.convertValues(source["createdAt"], null);
	        this.runs = source["runs"];
	        this.forks = source["forks"];
	        this.branches = source["branches"];
	        this.latestRun = this.convertValues(source["latestRun"], RunSummary);
	        this.fork = this.convertValues(source["fork"], ForkSummary);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class WorldPage {
	    worlds: WorldSummary[];
	    total: number;
	    branches?: number;
	    next?: string;
	
	    static createFrom(source: any = {}) {
	        return new WorldPage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.worlds = this.convertValues(source["worlds"], WorldSummary);
	        this.total = source["total"];
	        this.branches = source["branches"];
	        this.next = source["next"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class WorldQuery {
	    domain?: string;
	    parent?: string;
	    text?: string;
	    withoutBranches?: boolean;
	    after?: string;
	    limit?: number;
	
	    static createFrom(source: any = {}) {
	        return new WorldQuery(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.domain = source["domain"];
	        this.parent = source["parent"];
	        this.text = source["text"];
	        this.withoutBranches = source["withoutBranches"];
	        this.after = source["after"];
	        this.limit = source["limit"];
	    }
	}
	export class WorldRun {
	    id: string;
	    worldId: string;
	    status: string;
	    worldLocalTime: number;
	    parentTime: number;
	    deliberationIndex: number;
	    baseRunId?: string;
	    baseSeq: number;
	    latestCheckpointId?: string;
	    error?: string;
	    // Go type: time
	    createdAt: any;
	    // Go type: time
	    updatedAt: any;
	
	    static createFrom(source: any = {}) {
	        return new WorldRun(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.worldId = source["worldId"];
	        this.status = source["status"];
	        this.worldLocalTime = source["worldLocalTime"];
	        this.parentTime = source["parentTime"];
	        this.deliberationIndex = source["deliberationIndex"];
	        this.baseRunId = source["baseRunId"];
	        this.baseSeq = source["baseSeq"];
	        this.latestCheckpointId = source["latestCheckpointId"];
	        this.error = source["error"];
	        this.createdAt = this.convertValues(source["createdAt"], null);
	        this.updatedAt = this.convertValues(source["updatedAt"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class WorldSpec {
	    id: string;
	    name: string;
	    domain: string;
	    backend: string;
	    program: BlobRef;
	    initialState?: BlobRef;
	    params: number[];
	    seed: number;
	    parentWorldId?: string;
	    forkId?: string;
	    // Go type: time
	    createdAt: any;
	
	    static createFrom(source: any = {}) {
	        return new WorldSpec(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.domain = source["domain"];
	        this.backend = source["backend"];
	        this.program = this.convertValues(source["program"], BlobRef);
	        this.initialState = this.convertValues(source["initialState"], BlobRef);
	        this.params = source["params"];
	        this.seed = source["seed"];
	        this.parentWorldId = source["parentWorldId"];
	        this.forkId = source["forkId"];
	        this.createdAt = this.convertValues(source["createdAt"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace bundle {
	
	export class Checks {
	    manifest: boolean;
	    signature: boolean;
	    entries: boolean;
	    references: boolean;
	    replay: boolean;
	
	    static createFrom(source: any = {}) {
	        return new Checks(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.manifest = source["manifest"];
	        this.signature = source["signature"];
	        this.entries = source["entries"];
	        this.references = source["references"];
	        this.replay = source["replay"];
	    }
	}
	export class Counts {
	    worlds: number;
	    runs: number;
	    forks: number;
	    checkpoints: number;
	    streams: number;
	    events: number;
	    blobs: number;
	
	    static createFrom(source: any = {}) {
	        return new Counts(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.worlds = source["worlds"];
	        this.runs = source["runs"];
	        this.forks = source["forks"];
	        this.checkpoints = source["checkpoints"];
	        this.streams = source["streams"];
	        this.events = source["events"];
	        this.blobs = source["blobs"];
	    }
	}
	export class HeldRun {
	    id: string;
	    status: string;
	    recordedStatus?: string;
	    recordedError?: string;
	    events: number;
	
	    static createFrom(source: any = {}) {
	        return new HeldRun(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.status = source["status"];
	        this.recordedStatus = source["recordedStatus"];
	        this.recordedError = source["recordedError"];
	        this.events = source["events"];
	    }
	}
	export class HeldWorld {
	    id: string;
	    name: string;
	    domain: string;
	    parentWorldId?: string;
	    runs: HeldRun[];
	
	    static createFrom(source: any = {}) {
	        return new HeldWorld(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.domain = source["domain"];
	        this.parentWorldId = source["parentWorldId"];
	        this.runs = this.convertValues(source["runs"], HeldRun);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Scope {
	    ancestry: boolean;
	    descendants: boolean;
	
	    static createFrom(source: any = {}) {
	        return new Scope(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ancestry = source["ancestry"];
	        this.descendants = source["descendants"];
	    }
	}

}

export namespace deliberation {
	
	export class Branch {
	    worldId: string;
	    runId: string;
	    parent: string;
	    action: number[];
	    depth: number;
	    seed: number;
	    score: number;
	    hasScore: boolean;
	    done: boolean;
	    failed?: string;
	    duplicate?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new Branch(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.worldId = source["worldId"];
	        this.runId = source["runId"];
	        this.parent = source["parent"];
	        this.action = source["action"];
	        this.depth = source["depth"];
	        this.seed = source["seed"];
	        this.score = source["score"];
	        this.hasScore = source["hasScore"];
	        this.done = source["done"];
	        this.failed = source["failed"];
	        this.duplicate = source["duplicate"];
	    }
	}
	export class Budget {
	    branches: number;
	    used: number;
	    steps: number;
	    deduplicated: number;
	    depth: number;
	    wallMs: number;
	    stopped: string;
	
	    static createFrom(source: any = {}) {
	        return new Budget(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.branches = source["branches"];
	        this.used = source["used"];
	        this.steps = source["steps"];
	        this.deduplicated = source["deduplicated"];
	        this.depth = source["depth"];
	        this.wallMs = source["wallMs"];
	        this.stopped = source["stopped"];
	    }
	}
	export class Candidate {
	    action: number[];
	    score: number;
	    mean: number;
	    visits: number;
	    line: number[][];
	    branches: string[];
	    bestBranches: string[];
	    state?: number[];
	    failed?: string;
	
	    static createFrom(source: any = {}) {
	        return new Candidate(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.action = source["action"];
	        this.score = source["score"];
	        this.mean = source["mean"];
	        this.visits = source["visits"];
	        this.line = source["line"];
	        this.branches = source["branches"];
	        this.bestBranches = source["bestBranches"];
	        this.state = source["state"];
	        this.failed = source["failed"];
	    }
	}
	export class Round {
	    eventId?: string;
	    deliberationIndex: number;
	    parentRunId: string;
	    parentWorldId: string;
	    checkpointId: string;
	    parentTime: number;
	    strategy: string;
	    width?: number;
	    depth: number;
	    seeds: number[];
	    budget: Budget;
	    candidates: Candidate[];
	    chosen: number[];
	    scores?: {[key: string]: number};
	    appliedAt?: number;
	
	    static createFrom(source: any = {}) {
	        return new Round(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.eventId = source["eventId"];
	        this.deliberationIndex = source["deliberationIndex"];
	        this.parentRunId = source["parentRunId"];
	        this.parentWorldId = source["parentWorldId"];
	        this.checkpointId = source["checkpointId"];
	        this.parentTime = source["parentTime"];
	        this.strategy = source["strategy"];
	        this.width = source["width"];
	        this.depth = source["depth"];
	        this.seeds = source["seeds"];
	        this.budget = this.convertValues(source["budget"], Budget);
	        this.candidates = this.convertValues(source["candidates"], Candidate);
	        this.chosen = source["chosen"];
	        this.scores = source["scores"];
	        this.appliedAt = source["appliedAt"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Result {
	    rounds: Round[];
	    run: backend.WorldRun;
	    done: boolean;
	    state?: number[];
	    cancelled?: string;
	
	    static createFrom(source: any = {}) {
	        return new Result(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.rounds = this.convertValues(source["rounds"], Round);
	        this.run = this.convertValues(source["run"], backend.WorldRun);
	        this.done = source["done"];
	        this.state = source["state"];
	        this.cancelled = source["cancelled"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace doctor {
	
	export class Check {
	    name: string;
	    status: string;
	    detail: string;
	    fix?: string;
	
	    static createFrom(source: any = {}) {
	        return new Check(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.status = source["status"];
	        this.detail = source["detail"];
	        this.fix = source["fix"];
	    }
	}

}

export namespace mcpclient {
	
	export class ToolStatus {
	    name: string;
	    catalog: string;
	    description?: string;
	    readOnlyHint?: boolean;
	    safe?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ToolStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.catalog = source["catalog"];
	        this.description = source["description"];
	        this.readOnlyHint = source["readOnlyHint"];
	        this.safe = source["safe"];
	    }
	}
	export class ServerStatus {
	    name: string;
	    command?: string;
	    args?: string[];
	    url?: string;
	    network?: boolean;
	    workspace?: boolean;
	    private?: boolean;
	    safe?: string[];
	    state: string;
	    error?: string;
	    tools: ToolStatus[];
	    refused?: string[];
	
	    static createFrom(source: any = {}) {
	        return new ServerStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.command = source["command"];
	        this.args = source["args"];
	        this.url = source["url"];
	        this.network = source["network"];
	        this.workspace = source["workspace"];
	        this.private = source["private"];
	        this.safe = source["safe"];
	        this.state = source["state"];
	        this.error = source["error"];
	        this.tools = this.convertValues(source["tools"], ToolStatus);
	        this.refused = source["refused"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace memory {
	
	export class Source {
	    runId?: string;
	    eventId?: string;
	    reality: string;
	    worldId?: string;
	    url?: string;
	    // Go type: time
	    observedAt: any;
	    criticScore: number;
	    worth: number;
	    // Go type: time
	    addedAt: any;
	
	    static createFrom(source: any = {}) {
	        return new Source(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.eventId = source["eventId"];
	        this.reality = source["reality"];
	        this.worldId = source["worldId"];
	        this.url = source["url"];
	        this.observedAt = this.convertValues(source["observedAt"], null);
	        this.criticScore = source["criticScore"];
	        this.worth = source["worth"];
	        this.addedAt = this.convertValues(source["addedAt"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Provenance {
	    runId?: string;
	    eventId?: string;
	    reality: string;
	    worldId?: string;
	    url?: string;
	    // Go type: time
	    observedAt: any;
	
	    static createFrom(source: any = {}) {
	        return new Provenance(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.eventId = source["eventId"];
	        this.reality = source["reality"];
	        this.worldId = source["worldId"];
	        this.url = source["url"];
	        this.observedAt = this.convertValues(source["observedAt"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Memory {
	    id: string;
	    text: string;
	    type: string;
	    embeddingModel: string;
	    contentHash: string;
	    provenance: Provenance;
	    weight: number;
	    mergedCount: number;
	    // Go type: time
	    createdAt: any;
	    // Go type: time
	    mergedAt: any;
	    // Go type: time
	    updatedAt: any;
	    sources?: Source[];
	
	    static createFrom(source: any = {}) {
	        return new Memory(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.text = source["text"];
	        this.type = source["type"];
	        this.embeddingModel = source["embeddingModel"];
	        this.contentHash = source["contentHash"];
	        this.provenance = this.convertValues(source["provenance"], Provenance);
	        this.weight = source["weight"];
	        this.mergedCount = source["mergedCount"];
	        this.createdAt = this.convertValues(source["createdAt"], null);
	        this.mergedAt = this.convertValues(source["mergedAt"], null);
	        this.updatedAt = this.convertValues(source["updatedAt"], null);
	        this.sources = this.convertValues(source["sources"], Source);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Page {
	    memories: Memory[];
	    next: string;
	
	    static createFrom(source: any = {}) {
	        return new Page(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.memories = this.convertValues(source["memories"], Memory);
	        this.next = source["next"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class Retrieved {
	    id: string;
	    text: string;
	    type: string;
	    provenance: Provenance;
	    weight: number;
	    mergedCount: number;
	    // Go type: time
	    createdAt: any;
	    // Go type: time
	    mergedAt: any;
	    similarity: number;
	    embeddingModel: string;
	
	    static createFrom(source: any = {}) {
	        return new Retrieved(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.text = source["text"];
	        this.type = source["type"];
	        this.provenance = this.convertValues(source["provenance"], Provenance);
	        this.weight = source["weight"];
	        this.mergedCount = source["mergedCount"];
	        this.createdAt = this.convertValues(source["createdAt"], null);
	        this.mergedAt = this.convertValues(source["mergedAt"], null);
	        this.similarity = source["similarity"];
	        this.embeddingModel = source["embeddingModel"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace router {
	
	export class Rule {
	    id: string;
	    level: number;
	    description: string;
	
	    static createFrom(source: any = {}) {
	        return new Rule(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.level = source["level"];
	        this.description = source["description"];
	    }
	}

}

export namespace runtime {
	
	export class CurrentFile {
	    exists: boolean;
	    content?: string;
	    bytes: number;
	    truncated?: boolean;
	    binary?: boolean;
	    error?: string;
	
	    static createFrom(source: any = {}) {
	        return new CurrentFile(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.exists = source["exists"];
	        this.content = source["content"];
	        this.bytes = source["bytes"];
	        this.truncated = source["truncated"];
	        this.binary = source["binary"];
	        this.error = source["error"];
	    }
	}
	export class Approval {
	    runId: string;
	    requestId: string;
	    step: string;
	    title?: string;
	    tool: string;
	    args: number[];
	    rule: string;
	    risk: string;
	    why: string;
	    network: boolean;
	    sandboxed: boolean;
	    confinement: string;
	    inDoubt: boolean;
	    limits: backend.Limits;
	    retryOnTimeout: boolean;
	    current?: CurrentFile;
	    web?: web.Plan;
	    untrusted?: string[];
	    mcp?: backend.MCPTool;
	
	    static createFrom(source: any = {}) {
	        return new Approval(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.requestId = source["requestId"];
	        this.step = source["step"];
	        this.title = source["title"];
	        this.tool = source["tool"];
	        this.args = source["args"];
	        this.rule = source["rule"];
	        this.risk = source["risk"];
	        this.why = source["why"];
	        this.network = source["network"];
	        this.sandboxed = source["sandboxed"];
	        this.confinement = source["confinement"];
	        this.inDoubt = source["inDoubt"];
	        this.limits = this.convertValues(source["limits"], backend.Limits);
	        this.retryOnTimeout = source["retryOnTimeout"];
	        this.current = this.convertValues(source["current"], CurrentFile);
	        this.web = this.convertValues(source["web"], web.Plan);
	        this.untrusted = source["untrusted"];
	        this.mcp = this.convertValues(source["mcp"], backend.MCPTool);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class Installation {
	    id: string;
	    host?: string;
	
	    static createFrom(source: any = {}) {
	        return new Installation(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.host = source["host"];
	    }
	}
	export class PlanningAttempt {
	    attempt: number;
	    revision?: number;
	    review?: number;
	    model: string;
	    options?: {[key: string]: any};
	    answer: string;
	    normalised?: string[];
	    error?: string;
	    accepted?: boolean;
	    unstreamed?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new PlanningAttempt(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.attempt = source["attempt"];
	        this.revision = source["revision"];
	        this.review = source["review"];
	        this.model = source["model"];
	        this.options = source["options"];
	        this.answer = source["answer"];
	        this.normalised = source["normalised"];
	        this.error = source["error"];
	        this.accepted = source["accepted"];
	        this.unstreamed = source["unstreamed"];
	    }
	}
	export class ReviewRound {
	    round: number;
	    kept: string[];
	    reason: string;
	
	    static createFrom(source: any = {}) {
	        return new ReviewRound(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.round = source["round"];
	        this.kept = source["kept"];
	        this.reason = source["reason"];
	    }
	}
	export class Revision {
	    round: number;
	    failed: string[];
	    kept: string[];
	    rule: string;
	    reason: string;
	
	    static createFrom(source: any = {}) {
	        return new Revision(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.round = source["round"];
	        this.failed = source["failed"];
	        this.kept = source["kept"];
	        this.rule = source["rule"];
	        this.reason = source["reason"];
	    }
	}
	export class RunAnswer {
	    text: string;
	    cites?: string[];
	    model?: string;
	    review?: number;
	    reason?: string;
	
	    static createFrom(source: any = {}) {
	        return new RunAnswer(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.text = source["text"];
	        this.cites = source["cites"];
	        this.model = source["model"];
	        this.review = source["review"];
	        this.reason = source["reason"];
	    }
	}
	export class coderScript {
	    step: string;
	    language: string;
	    blob: backend.BlobRef;
	    source: string;
	    model?: string;
	
	    static createFrom(source: any = {}) {
	        return new coderScript(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.step = source["step"];
	        this.language = source["language"];
	        this.blob = this.convertValues(source["blob"], backend.BlobRef);
	        this.source = source["source"];
	        this.model = source["model"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class critiquePayload {
	    step?: string;
	    score: number;
	    explanation: string;
	    source: string;
	    model?: string;
	    normalised?: string[];
	    modelError?: string;
	    decision?: string;
	
	    static createFrom(source: any = {}) {
	        return new critiquePayload(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.step = source["step"];
	        this.score = source["score"];
	        this.explanation = source["explanation"];
	        this.source = source["source"];
	        this.model = source["model"];
	        this.normalised = source["normalised"];
	        this.modelError = source["modelError"];
	        this.decision = source["decision"];
	    }
	}
	export class stepFinished {
	    step: string;
	    attempt: number;
	    ok: boolean;
	    exitCode: number;
	    timedOut: boolean;
	    truncated: boolean;
	    durationMs: number;
	    stdout?: backend.BlobRef;
	    stderr?: backend.BlobRef;
	    stdoutTail?: string;
	    stderrTail?: string;
	    filesChanged?: string[];
	    output?: number[];
	    error?: string;
	    retryable?: boolean;
	    sandboxed: boolean;
	    confinement?: string;
	    // Go type: backend
	    placement?: any;
	    // Go type: critiquePayload
	    critique?: any;
	    checkpointId?: string;
	    memory?: number[];
	
	    static createFrom(source: any = {}) {
	        return new stepFinished(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.step = source["step"];
	        this.attempt = source["attempt"];
	        this.ok = source["ok"];
	        this.exitCode = source["exitCode"];
	        this.timedOut = source["timedOut"];
	        this.truncated = source["truncated"];
	        this.durationMs = source["durationMs"];
	        this.stdout = this.convertValues(source["stdout"], backend.BlobRef);
	        this.stderr = this.convertValues(source["stderr"], backend.BlobRef);
	        this.stdoutTail = source["stdoutTail"];
	        this.stderrTail = source["stderrTail"];
	        this.filesChanged = source["filesChanged"];
	        this.output = source["output"];
	        this.error = source["error"];
	        this.retryable = source["retryable"];
	        this.sandboxed = source["sandboxed"];
	        this.confinement = source["confinement"];
	        this.placement = this.convertValues(source["placement"], null);
	        this.critique = this.convertValues(source["critique"], null);
	        this.checkpointId = source["checkpointId"];
	        this.memory = source["memory"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class approvalRequest {
	    requestId: string;
	    step: string;
	    tool: string;
	    args: number[];
	    rule: string;
	    risk: string;
	    why: string;
	    network: boolean;
	    sandboxed: boolean;
	    limits: backend.Limits;
	    inDoubt?: boolean;
	    untrusted?: string[];
	    mcp?: backend.MCPTool;
	
	    static createFrom(source: any = {}) {
	        return new approvalRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.requestId = source["requestId"];
	        this.step = source["step"];
	        this.tool = source["tool"];
	        this.args = source["args"];
	        this.rule = source["rule"];
	        this.risk = source["risk"];
	        this.why = source["why"];
	        this.network = source["network"];
	        this.sandboxed = source["sandboxed"];
	        this.limits = this.convertValues(source["limits"], backend.Limits);
	        this.inDoubt = source["inDoubt"];
	        this.untrusted = source["untrusted"];
	        this.mcp = this.convertValues(source["mcp"], backend.MCPTool);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class StepRecord {
	    node: backend.TaskNode;
	    state: string;
	    attempts: number;
	    // Go type: approvalRequest
	    approval?: any;
	    approved: boolean;
	    approvedArgs?: number[];
	    network: boolean;
	    hosts?: string[];
	    privateHosts?: string[];
	    // Go type: stepFinished
	    result?: any;
	    // Go type: critiquePayload
	    critique?: any;
	    // Go type: coderScript
	    script?: any;
	    error?: string;
	    denied?: boolean;
	    untrusted?: string[];
	
	    static createFrom(source: any = {}) {
	        return new StepRecord(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.node = this.convertValues(source["node"], backend.TaskNode);
	        this.state = source["state"];
	        this.attempts = source["attempts"];
	        this.approval = this.convertValues(source["approval"], null);
	        this.approved = source["approved"];
	        this.approvedArgs = source["approvedArgs"];
	        this.network = source["network"];
	        this.hosts = source["hosts"];
	        this.privateHosts = source["privateHosts"];
	        this.result = this.convertValues(source["result"], null);
	        this.critique = this.convertValues(source["critique"], null);
	        this.script = this.convertValues(source["script"], null);
	        this.error = source["error"];
	        this.denied = source["denied"];
	        this.untrusted = source["untrusted"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class TaskRequest {
	    task: string;
	    plan?: backend.TaskGraph;
	    approvalMode: string;
	    models?: {[key: string]: string};
	    workspace?: string;
	    workspaceId?: backend.FolderID;
	    limits: backend.Limits;
	    maxSteps: number;
	    maxPlanSteps?: number;
	    maxReplans: number;
	    maxStepReplans?: number;
	    maxRetries: number;
	    concurrency: number;
	    review?: boolean;
	    maxReviews?: number;
	    criticThreshold?: number;
	    allowedHosts?: string[];
	    owner?: Installation;
	
	    static createFrom(source: any = {}) {
	        return new TaskRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.task = source["task"];
	        this.plan = this.convertValues(source["plan"], backend.TaskGraph);
	        this.approvalMode = source["approvalMode"];
	        this.models = source["models"];
	        this.workspace = source["workspace"];
	        this.workspaceId = this.convertValues(source["workspaceId"], backend.FolderID);
	        this.limits = this.convertValues(source["limits"], backend.Limits);
	        this.maxSteps = source["maxSteps"];
	        this.maxPlanSteps = source["maxPlanSteps"];
	        this.maxReplans = source["maxReplans"];
	        this.maxStepReplans = source["maxStepReplans"];
	        this.maxRetries = source["maxRetries"];
	        this.concurrency = source["concurrency"];
	        this.review = source["review"];
	        this.maxReviews = source["maxReviews"];
	        this.criticThreshold = source["criticThreshold"];
	        this.allowedHosts = source["allowedHosts"];
	        this.owner = this.convertValues(source["owner"], Installation);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class RunState {
	    runId: string;
	    worldId: string;
	    request: TaskRequest;
	    status: string;
	    statusReason?: string;
	    needsModel?: boolean;
	    graph?: backend.TaskGraph;
	    steps: {[key: string]: StepRecord};
	    planAttempts: number;
	    replans: number;
	    invalidPlan?: string;
	    roundReplans?: number;
	    planSource?: string;
	    planning?: PlanningAttempt[];
	    revision?: Revision;
	    revised?: Revision[];
	    review?: ReviewRound;
	    reviews?: ReviewRound[];
	    answer?: RunAnswer;
	    outside?: string[];
	    ticks: number;
	    allowedHosts?: string[];
	    stepsRun: number;
	    response?: string;
	    error?: string;
	    seq: number;
	    cancelRequested?: string;
	
	    static createFrom(source: any = {}) {
	        return new RunState(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.worldId = source["worldId"];
	        this.request = this.convertValues(source["request"], TaskRequest);
	        this.status = source["status"];
	        this.statusReason = source["statusReason"];
	        this.needsModel = source["needsModel"];
	        this.graph = this.convertValues(source["graph"], backend.TaskGraph);
	        this.steps = source["steps"];
	        this.planAttempts = source["planAttempts"];
	        this.replans = source["replans"];
	        this.invalidPlan = source["invalidPlan"];
	        this.roundReplans = source["roundReplans"];
	        this.planSource = source["planSource"];
	        this.planning = this.convertValues(source["planning"], PlanningAttempt);
	        this.revision = this.convertValues(source["revision"], Revision);
	        this.revised = this.convertValues(source["revised"], Revision);
	        this.review = this.convertValues(source["review"], ReviewRound);
	        this.reviews = this.convertValues(source["reviews"], ReviewRound);
	        this.answer = this.convertValues(source["answer"], RunAnswer);
	        this.outside = source["outside"];
	        this.ticks = source["ticks"];
	        this.allowedHosts = source["allowedHosts"];
	        this.stepsRun = source["stepsRun"];
	        this.response = source["response"];
	        this.error = source["error"];
	        this.seq = source["seq"];
	        this.cancelRequested = source["cancelRequested"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class RunSummary {
	    run: backend.WorldRun;
	    task: string;
	    name?: string;
	    approvals: number;
	    steps: number;
	    stepsDone: number;
	    drivenBy?: string;
	    answer?: string;
	
	    static createFrom(source: any = {}) {
	        return new RunSummary(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.run = this.convertValues(source["run"], backend.WorldRun);
	        this.task = source["task"];
	        this.name = source["name"];
	        this.approvals = source["approvals"];
	        this.steps = source["steps"];
	        this.stepsDone = source["stepsDone"];
	        this.drivenBy = source["drivenBy"];
	        this.answer = source["answer"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace service {
	
	export class Counts {
	    worlds: number;
	    runs: number;
	    taskRuns: number;
	    simulatedWorlds: number;
	    deliberationBranches: number;
	    streams: number;
	    events: number;
	
	    static createFrom(source: any = {}) {
	        return new Counts(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.worlds = source["worlds"];
	        this.runs = source["runs"];
	        this.taskRuns = source["taskRuns"];
	        this.simulatedWorlds = source["simulatedWorlds"];
	        this.deliberationBranches = source["deliberationBranches"];
	        this.streams = source["streams"];
	        this.events = source["events"];
	    }
	}
	export class MemorySource {
	    runId?: string;
	    eventId?: string;
	    reality: string;
	    worldId?: string;
	    url?: string;
	    // Go type: time
	    observedAt: any;
	    criticScore: number;
	    worth: number;
	    // Go type: time
	    addedAt: any;
	    stream?: string;
	    seq?: number;
	    eventType?: string;
	    step?: string;
	
	    static createFrom(source: any = {}) {
	        return new MemorySource(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.eventId = source["eventId"];
	        this.reality = source["reality"];
	        this.worldId = source["worldId"];
	        this.url = source["url"];
	        this.observedAt = this.convertValues(source["observedAt"], null);
	        this.criticScore = source["criticScore"];
	        this.worth = source["worth"];
	        this.addedAt = this.convertValues(source["addedAt"], null);
	        this.stream = source["stream"];
	        this.seq = source["seq"];
	        this.eventType = source["eventType"];
	        this.step = source["step"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class MemoryDetail {
	    memory: memory.Memory;
	    dimensions: number;
	    sources: MemorySource[];
	
	    static createFrom(source: any = {}) {
	        return new MemoryDetail(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.memory = this.convertValues(source["memory"], memory.Memory);
	        this.dimensions = source["dimensions"];
	        this.sources = this.convertValues(source["sources"], MemorySource);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class Overview {
	    version: string;
	    dataDir: string;
	    databasePath: string;
	    schemaVersion: number;
	    latestSchemaVersion: number;
	    counts: Counts;
	    recentEvents: backend.Event[];
	
	    static createFrom(source: any = {}) {
	        return new Overview(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.version = source["version"];
	        this.dataDir = source["dataDir"];
	        this.databasePath = source["databasePath"];
	        this.schemaVersion = source["schemaVersion"];
	        this.latestSchemaVersion = source["latestSchemaVersion"];
	        this.counts = this.convertValues(source["counts"], Counts);
	        this.recentEvents = this.convertValues(source["recentEvents"], backend.Event);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ReindexResult {
	    model: string;
	    previous: string;
	    reembedded: number;
	    indexed: number;
	    tookNs: number;
	    settingsSaved: boolean;
	
	    static createFrom(source: any = {}) {
	        return new ReindexResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.model = source["model"];
	        this.previous = source["previous"];
	        this.reembedded = source["reembedded"];
	        this.indexed = source["indexed"];
	        this.tookNs = source["tookNs"];
	        this.settingsSaved = source["settingsSaved"];
	    }
	}

}

export namespace settings {
	
	export class Problem {
	    field: string;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new Problem(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.field = source["field"];
	        this.message = source["message"];
	    }
	}
	export class Settings {
	    ollamaHost: string;
	    models: {[key: string]: string};
	    approvalMode: string;
	    theme: string;
	    worldMemoryMiB?: number;
	    allowedHosts?: string[];
	    taskSteps?: string;
	    maxReviews?: number;
	    criticThreshold?: number;
	
	    static createFrom(source: any = {}) {
	        return new Settings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ollamaHost = source["ollamaHost"];
	        this.models = source["models"];
	        this.approvalMode = source["approvalMode"];
	        this.theme = source["theme"];
	        this.worldMemoryMiB = source["worldMemoryMiB"];
	        this.allowedHosts = source["allowedHosts"];
	        this.taskSteps = source["taskSteps"];
	        this.maxReviews = source["maxReviews"];
	        this.criticThreshold = source["criticThreshold"];
	    }
	}

}

export namespace starlark {
	
	export class Limits {
	    maxSteps: number;
	    maxStateBytes: number;
	    maxMemoryBytes: number;
	
	    static createFrom(source: any = {}) {
	        return new Limits(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.maxSteps = source["maxSteps"];
	        this.maxStateBytes = source["maxStateBytes"];
	        this.maxMemoryBytes = source["maxMemoryBytes"];
	    }
	}

}

export namespace tool {
	
	export class CatalogEntry {
	    name: string;
	    description: string;
	    args_schema: number[];
	    portable?: boolean;
	    mcp?: backend.MCPTool;
	    repeatable?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new CatalogEntry(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.description = source["description"];
	        this.args_schema = source["args_schema"];
	        this.portable = source["portable"];
	        this.mcp = this.convertValues(source["mcp"], backend.MCPTool);
	        this.repeatable = source["repeatable"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace web {
	
	export class Plan {
	    url: string;
	    host: string;
	    method: string;
	    bodyBytes?: number;
	    maxBytes: number;
	    maxRedirects: number;
	    timeoutMs: number;
	    local?: string;
	    browser?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new Plan(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.url = source["url"];
	        this.host = source["host"];
	        this.method = source["method"];
	        this.bodyBytes = source["bodyBytes"];
	        this.maxBytes = source["maxBytes"];
	        this.maxRedirects = source["maxRedirects"];
	        this.timeoutMs = source["timeoutMs"];
	        this.local = source["local"];
	        this.browser = source["browser"];
	    }
	}

}

export namespace world {
	
	export class Change {
	    path: string;
	    kind: string;
	    a?: number[];
	    b?: number[];
	
	    static createFrom(source: any = {}) {
	        return new Change(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.kind = source["kind"];
	        this.a = source["a"];
	        this.b = source["b"];
	    }
	}
	export class Segment {
	    stream: string;
	    worldId: string;
	    toSeq: number;
	
	    static createFrom(source: any = {}) {
	        return new Segment(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.stream = source["stream"];
	        this.worldId = source["worldId"];
	        this.toSeq = source["toSeq"];
	    }
	}
	export class BranchDiff {
	    a: string;
	    b: string;
	    commonWorldId?: string;
	    sharedEvents: number;
	    forkPoint?: Segment;
	    stateA: number[];
	    stateB: number[];
	    stateChanges: Change[];
	    eventsA: backend.Event[];
	    eventsB: backend.Event[];
	    eventsATotal: number;
	    eventsBTotal: number;
	
	    static createFrom(source: any = {}) {
	        return new BranchDiff(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.a = source["a"];
	        this.b = source["b"];
	        this.commonWorldId = source["commonWorldId"];
	        this.sharedEvents = source["sharedEvents"];
	        this.forkPoint = this.convertValues(source["forkPoint"], Segment);
	        this.stateA = source["stateA"];
	        this.stateB = source["stateB"];
	        this.stateChanges = this.convertValues(source["stateChanges"], Change);
	        this.eventsA = this.convertValues(source["eventsA"], backend.Event);
	        this.eventsB = this.convertValues(source["eventsB"], backend.Event);
	        this.eventsATotal = source["eventsATotal"];
	        this.eventsBTotal = source["eventsBTotal"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class Divergence {
	    stream: string;
	    seq: number;
	    type: string;
	    expected: string;
	    actual: string;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new Divergence(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.stream = source["stream"];
	        this.seq = source["seq"];
	        this.type = source["type"];
	        this.expected = source["expected"];
	        this.actual = source["actual"];
	        this.message = source["message"];
	    }
	}
	export class Edge {
	    fork: backend.Fork;
	    at: number;
	
	    static createFrom(source: any = {}) {
	        return new Edge(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.fork = this.convertValues(source["fork"], backend.Fork);
	        this.at = source["at"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class HistoryFilter {
	    types: string[];
	    reality: string;
	    text: string;
	    regex: boolean;
	
	    static createFrom(source: any = {}) {
	        return new HistoryFilter(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.types = source["types"];
	        this.reality = source["reality"];
	        this.text = source["text"];
	        this.regex = source["regex"];
	    }
	}
	export class HistoryMatch {
	    index: number;
	    event: backend.Event;
	
	    static createFrom(source: any = {}) {
	        return new HistoryMatch(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.index = source["index"];
	        this.event = this.convertValues(source["event"], backend.Event);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class HistoryMatches {
	    total: number;
	    inherited: number;
	    matches: HistoryMatch[];
	    from: number;
	    next: number;
	
	    static createFrom(source: any = {}) {
	        return new HistoryMatches(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.total = source["total"];
	        this.inherited = source["inherited"];
	        this.matches = this.convertValues(source["matches"], HistoryMatch);
	        this.from = source["from"];
	        this.next = source["next"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class HistoryPage {
	    total: number;
	    offset: number;
	    events: backend.Event[];
	    inherited: number;
	    segments: Segment[];
	
	    static createFrom(source: any = {}) {
	        return new HistoryPage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.total = source["total"];
	        this.offset = source["offset"];
	        this.events = this.convertValues(source["events"], backend.Event);
	        this.inherited = source["inherited"];
	        this.segments = this.convertValues(source["segments"], Segment);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Node {
	    world: backend.WorldSpec;
	    latestRun?: backend.WorldRun;
	    runs: number;
	
	    static createFrom(source: any = {}) {
	        return new Node(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.world = this.convertValues(source["world"], backend.WorldSpec);
	        this.latestRun = this.convertValues(source["latestRun"], backend.WorldRun);
	        this.runs = source["runs"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Lineage {
	    nodes: Node[];
	    edges: Edge[];
	
	    static createFrom(source: any = {}) {
	        return new Lineage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.nodes = this.convertValues(source["nodes"], Node);
	        this.edges = this.convertValues(source["edges"], Edge);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class OutlineFork {
	    id: string;
	    from: string;
	    to: string;
	    divergence: string;
	    at: number;
	    change?: string;
	    seed?: string;
	
	    static createFrom(source: any = {}) {
	        return new OutlineFork(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.from = source["from"];
	        this.to = source["to"];
	        this.divergence = source["divergence"];
	        this.at = source["at"];
	        this.change = source["change"];
	        this.seed = source["seed"];
	    }
	}
	export class OutlineWorld {
	    id: string;
	    name: string;
	    domain: string;
	    parent?: string;
	    // Go type: time
	    createdAt: any;
	    runs: number;
	    runId?: string;
	    status?: string;
	    round?: number;
	    stepping?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new OutlineWorld(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.name = source["name"];
	        this.domain = source["domain"];
	        this.parent = source["parent"];
	        this.createdAt = this.convertValues(source["createdAt"], null);
	        this.runs = source["runs"];
	        this.runId = source["runId"];
	        this.status = source["status"];
	        this.round = source["round"];
	        this.stepping = source["stepping"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Outline {
	    worlds: OutlineWorld[];
	    forks: OutlineFork[];
	
	    static createFrom(source: any = {}) {
	        return new Outline(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.worlds = this.convertValues(source["worlds"], OutlineWorld);
	        this.forks = this.convertValues(source["forks"], OutlineFork);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	
	
	export class StateAtTime {
	    runId: string;
	    time: number;
	    state: number[];
	
	    static createFrom(source: any = {}) {
	        return new StateAtTime(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.time = source["time"];
	        this.state = source["state"];
	    }
	}
	export class StatesAt {
	    at: number;
	    a: StateAtTime;
	    b: StateAtTime;
	    changes: Change[];
	
	    static createFrom(source: any = {}) {
	        return new StatesAt(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.at = source["at"];
	        this.a = this.convertValues(source["a"], StateAtTime);
	        this.b = this.convertValues(source["b"], StateAtTime);
	        this.changes = this.convertValues(source["changes"], Change);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class StepOutcome {
	    run: backend.WorldRun;
	    state: number[];
	    emitted?: number[][];
	    done: boolean;
	
	    static createFrom(source: any = {}) {
	        return new StepOutcome(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.run = this.convertValues(source["run"], backend.WorldRun);
	        this.state = source["state"];
	        this.emitted = source["emitted"];
	        this.done = source["done"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class TypeCount {
	    type: string;
	    count: number;
	
	    static createFrom(source: any = {}) {
	        return new TypeCount(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.type = source["type"];
	        this.count = source["count"];
	    }
	}
	export class VerifyReport {
	    runId: string;
	    events: number;
	    steps: number;
	    checkpoints: number;
	    ok: boolean;
	    divergence?: Divergence;
	
	    static createFrom(source: any = {}) {
	        return new VerifyReport(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.runId = source["runId"];
	        this.events = source["events"];
	        this.steps = source["steps"];
	        this.checkpoints = source["checkpoints"];
	        this.ok = source["ok"];
	        this.divergence = this.convertValues(source["divergence"], Divergence);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

