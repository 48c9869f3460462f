/**
 * Route rule names (GEP-995, docs/gateway-api.md §21): read from the rules, used to label status
 * messages, and checked for uniqueness within a route.
 */
import { arr } from './rule-checks';

/** A rule name as the CRD allows it (SectionName: RFC 1123 subdomain, at most 253 characters). */
const RULE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Returns the name of each rule (undefined when unnamed or not a valid SectionName), in rule order. */
export function ruleNamesOf(rules: unknown): (string | undefined)[] {
  return arr(rules as { name?: unknown }[]).map((r) => {
    const name = r && typeof r === 'object' ? r.name : undefined;
    return typeof name === 'string' && name.length <= 253 && RULE_NAME.test(name) ? name : undefined;
  });
}

/** Returns how status messages name rule `index`: `rule 2` or `rule 2 "checkout"`. */
export function ruleLabel(index: number, name: string | undefined): string {
  return name === undefined ? `rule ${index}` : `rule ${index} ${JSON.stringify(name)}`;
}

/**
 * Returns, for each rule, the index of an earlier rule with the same name (undefined when its
 * name is unique so far or it has none). The API requires names to be unique within a route; the
 * CRD does not check it, so the later rules are dropped.
 */
export function duplicateNames(names: (string | undefined)[]): (number | undefined)[] {
  const first = new Map<string, number>();
  return names.map((name, i) => {
    if (name === undefined) return undefined;
    const earlier = first.get(name);
    if (earlier === undefined) first.set(name, i);
    return earlier;
  });
}
