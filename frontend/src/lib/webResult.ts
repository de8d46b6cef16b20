// A web_fetch or browser step's result, read from what the tool returns
// (Go: tool.webFetchOutput, tool.browserOutput), not from its stdout tails.

/** WebResult is a fetched or rendered page as a step panel shows it. */
export interface WebResult {
  tool: 'web_fetch' | 'browser';
  /** The HTTP status and its text ("200 OK"); "" when no answer came. */
  status: string;
  finalUrl: string;
  /** Where it was asked for, when a redirect led elsewhere. */
  from?: string;
  contentType: string;
  title: string;
  text: string;
  /** The text was cut for the record (the whole is in stdout). */
  textCut: boolean;
  /** Hosts whose requests the guard refused, split: Chromium's own calls home, and the page's. */
  chromiumNoise: string[];
  refused: string[];
  error: string;
}

/**
 * Hosts Chromium calls by itself, whatever the page (safe browsing,
 * component updates, sign-in, fonts it prefetches): refused, they cost
 * the page nothing.
 */
const CHROMIUM_HOSTS = [/(^|\.)google\.com$/, /(^|\.)googleapis\.com$/, /(^|\.)gstatic\.com$/, /(^|\.)gvt1\.com$/, /(^|\.)gvt2\.com$/, /(^|\.)googleusercontent\.com$/, /(^|\.)chrome\.com$/];

/** isChromiumNoise reports whether a refused host is one Chromium calls by itself. */
export function isChromiumNoise(host: string): boolean {
  const h = host.replace(/:\d+$/, '').toLowerCase();
  return CHROMIUM_HOSTS.some((re) => re.test(h));
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** webResultOf reads a web_fetch or browser step's output; undefined for any other tool or an output without a URL. */
export function webResultOf(tool: string | undefined, output: unknown): WebResult | undefined {
  if ((tool !== 'web_fetch' && tool !== 'browser') || typeof output !== 'object' || output === null) return undefined;
  const o = output as Record<string, unknown>;
  const url = str(o.url);
  const finalUrl = str(o.final_url) || url;
  if (!finalUrl) return undefined;
  const code = typeof o.status === 'number' && o.status > 0 ? o.status : 0;
  const refusedAll = Array.isArray(o.refused) ? o.refused.filter((h): h is string => typeof h === 'string') : [];
  return {
    tool,
    status: code ? `${code}${str(o.status_text) ? ` ${str(o.status_text)}` : ''}` : '',
    finalUrl,
    ...(url && url !== finalUrl ? { from: url } : {}),
    contentType: str(o.content_type) || (tool === 'browser' ? 'text/html (rendered)' : ''),
    title: str(o.title),
    text: str(o.text),
    textCut: o.text_truncated === true,
    chromiumNoise: refusedAll.filter(isChromiumNoise),
    refused: refusedAll.filter((h) => !isChromiumNoise(h)),
    error: str(o.error),
  };
}

/**
 * otherNotes is what a successful web step's stderr says besides the
 * refused hosts (which the panel shows from the output): "the body was cut
 * at its size limit", and the like.
 */
export function otherNotes(stderr: string | undefined): string[] {
  return (stderr ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('Requests to hosts not approved'));
}
