/**
 * Which resources of a rejected xDS response Envoy rejected, read from Envoy's error_detail.
 *
 * A NACK answers a whole response, but Envoy applies the valid resources of it and names the
 * failing ones when it can: LDS says `Error adding/updating listener(s) <name>: <why>` (one line
 * per listener), CDS `Error adding/updating cluster(s) <name>: <why>, <name>: <why>`. Other types
 * (RouteConfiguration, Secret, ClusterLoadAssignment) usually name nothing. So a response's
 * candidates are the resources it brought to the Envoy; when the message names some of them, those
 * are rejected (each with its own part of the message) and the others were applied; when it names
 * none, every candidate is taken as rejected (docs/xds.md §4).
 */

/** The longest Envoy message kept for one rejected resource, in characters. */
export const NACK_MESSAGE_LIMIT = 1024;

export interface ResourceVersion {
  readonly name: string;
  readonly version: string;
}

export interface RejectedVersion {
  name: string;
  version: string;
  /** What Envoy said about this resource (the whole message when it named none), one line. */
  message: string;
}

export interface NackAttribution {
  rejected: RejectedVersion[];
  /** Candidates Envoy applied: the message names other resources of the response, not these. */
  accepted: string[];
}

/** Envoy's message as one line of at most `limit` characters. */
export function oneLineMessage(message: string, limit = NACK_MESSAGE_LIMIT): string {
  const flat = message.replace(/\s+/g, ' ').trim();
  return flat.length > limit ? flat.slice(0, limit - 1) + '…' : flat;
}

/**
 * Splits `message` into the parts about each of `names` that it names as `<name>: <why>` (a name
 * at the start, or after whitespace or a comma, followed by a colon and a space), in order.
 * Returns name → its part, trimmed; names not mentioned that way are absent.
 */
export function namedParts(message: string, names: Iterable<string>): Map<string, string> {
  const hits: { name: string; at: number }[] = [];
  for (const name of new Set(names)) {
    if (!name) continue;
    const needle = name + ': ';
    for (let at = message.indexOf(needle); at >= 0; at = message.indexOf(needle, at + 1)) {
      if (at === 0 || /[\s,]/.test(message[at - 1])) {
        hits.push({ name, at });
        break;
      }
    }
  }
  hits.sort((a, b) => a.at - b.at);
  const parts = new Map<string, string>();
  hits.forEach((hit, i) => {
    const end = i + 1 < hits.length ? hits[i + 1].at : message.length;
    const part = message
      .slice(hit.at + hit.name.length + 2, end)
      .replace(/[\s,]+$/, '')
      .trim();
    parts.set(hit.name, part);
  });
  return parts;
}

/**
 * Attributes a NACK to the candidates of the rejected response (the resources it brought to the
 * Envoy, plus those it carried again after an earlier rejection). The argument is Envoy's own:
 * when the message names some candidates, Envoy reports every resource it failed on, so the
 * other candidates were applied; when it names none, nothing tells them apart.
 */
export function attributeNack(message: string, candidates: readonly ResourceVersion[]): NackAttribution {
  const parts = namedParts(
    message,
    candidates.map((c) => c.name),
  );
  if (parts.size === 0) {
    const whole = oneLineMessage(message);
    return {
      rejected: uniqueByName(candidates).map((c) => ({ name: c.name, version: c.version, message: whole })),
      accepted: [],
    };
  }
  const rejected: RejectedVersion[] = [];
  const accepted: string[] = [];
  for (const c of uniqueByName(candidates)) {
    const part = parts.get(c.name);
    if (part === undefined) accepted.push(c.name);
    else rejected.push({ name: c.name, version: c.version, message: oneLineMessage(part || message) });
  }
  return { rejected, accepted };
}

/** The first candidate of each name (the response's own version comes first, see stream.ts). */
function uniqueByName(candidates: readonly ResourceVersion[]): ResourceVersion[] {
  const seen = new Set<string>();
  const out: ResourceVersion[] = [];
  for (const c of candidates) {
    if (seen.has(c.name)) continue;
    seen.add(c.name);
    out.push(c);
  }
  return out;
}
