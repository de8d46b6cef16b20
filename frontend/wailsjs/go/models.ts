export namespace backend {
	
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

export namespace service {
	
	export class Counts {
	    worlds: number;
	    runs: number;
	    streams: number;
	    events: number;
	
	    static createFrom(source: any = {}) {
	        return new Counts(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.worlds = source["worlds"];
	        this.runs = source["runs"];
	        this.streams = source["streams"];
	        this.events = source["events"];
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

}

