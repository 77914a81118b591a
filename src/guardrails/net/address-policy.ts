/**
 * Which addresses a guardrail may connect to when private hosts are not allowed: none of
 * loopback, private (RFC 1918), carrier-grade NAT, link-local, unique-local, multicast,
 * unspecified or reserved space, including IPv4 written inside IPv6 (mapped, NAT64, 6to4).
 */
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries (::ffff:a.b.c.d, 64:ff9b::/96, 2002::/16), if any. */
function embeddedIpv4(address: string): string | null {
  const words = expandIpv6(address);
  if (!words) return null;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!);
  if (zeros(0, 6) && (words[6] !== 0 || words[7]! > 1)) return v4(words[6]!, words[7]!); // deprecated ::a.b.c.d
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return null;
}

function expandIpv6(address: string): number[] | null {
  let text = address.split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    text =
      text.slice(0, -dotted[1]!.length) +
      `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (s: string) => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (tail === undefined && fill !== 0)) return null;
  const words = [...left, ...new Array<number>(fill).fill(0), ...right];
  return words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}

/** True when `address` (an IP literal) is one a guardrail must not reach without the setting. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all: refuse rather than guess
  const v4 = embeddedIpv4(address);
  if (v4 !== null && blocked.check(v4, 'ipv4')) return true;
  return blocked.check(address.split('%')[0]!, 'ipv6');
}
