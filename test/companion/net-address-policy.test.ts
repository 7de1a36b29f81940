/**
 * The address check on its own: every refused form is checked here, with no traffic sent
 * anywhere (interface-spec Events rule 7).
 */
import { describe, expect, it } from 'vitest';
import { checkAddress, checkTargetUrl, classifyIp } from '../../companion/net/address-policy.ts';

const strict = { allowLoopback: false };
const dev = { allowLoopback: true };

describe('classifyIp', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', '6to4'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.1', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.7', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'ipv4_mapped'],
    ['::ffff:7f00:1', 'ipv4_mapped'],
    ['::ffff:8.8.8.8', 'ipv4_mapped'],
    ['::127.0.0.1', 'ipv4_compatible'],
    ['64:ff9b::10.0.0.1', 'nat64'],
    ['64:ff9b::808:808', 'nat64'],
    ['64:ff9b:1::1', 'nat64'],
    ['100::1', 'discard'],
    ['2001:0:4136:e378::1', 'teredo'],
    ['2001:db8::1', 'documentation'],
    ['2001:10::1', 'reserved'],
    ['2002:7f00:1::1', '6to4'],
    ['2002:808:808::1', '6to4'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fe80::1', 'link_local'],
    ['febf::1', 'link_local'],
    ['fec0::1', 'site_local'],
    ['ff02::1', 'multicast'],
    ['4000::1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
  ])('%s is %s', (ip, range) => {
    expect(classifyIp(ip)?.range).toBe(range);
  });

  it('is undefined for host names and malformed addresses', () => {
    for (const s of ['example.com', 'localhost', '1.2.3', '01.2.3.4', '256.1.1.1', '1:2:3:4:5:6:7:8:9', '1::2::3', 'fe80::1%eth0', '::ffff:1.2.3.256', '']) {
      expect(classifyIp(s)).toBeUndefined();
    }
  });
});

describe('checkAddress', () => {
  it('allows public addresses and refuses every special-purpose range', () => {
    expect(checkAddress('93.184.216.34', strict).ok).toBe(true);
    expect(checkAddress('2606:4700:4700::1111', strict).ok).toBe(true);
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3', '169.254.169.254', '100.100.100.100', '::ffff:10.0.0.1', 'fe80::1', '224.0.0.251', '0.0.0.0', '::']) {
      const v = checkAddress(ip, strict);
      expect(v.ok, ip).toBe(false);
    }
  });

  it('allows loopback only under the operator setting, and never its mapped or NAT64 forms', () => {
    expect(checkAddress('127.0.0.1', dev).ok).toBe(true);
    expect(checkAddress('127.9.9.9', dev).ok).toBe(true);
    expect(checkAddress('::1', dev).ok).toBe(true);
    for (const ip of ['::ffff:127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::', '10.0.0.1', '0.0.0.0']) expect(checkAddress(ip, dev).ok, ip).toBe(false);
  });

  it('names the range in its refusal', () => {
    expect(checkAddress('169.254.169.254', strict)).toMatchObject({ ok: false, range: 'link_local' });
    expect(checkAddress('not-an-ip', strict)).toMatchObject({ ok: false, range: 'not_an_address' });
  });
});

describe('checkTargetUrl', () => {
  it('accepts public https URLs with a name or a public literal', () => {
    expect(checkTargetUrl('https://hooks.example.com/in', strict)).toMatchObject({ ok: true });
    expect(checkTargetUrl('https://93.184.216.34:8443/in', strict)).toMatchObject({ ok: true });
    expect(checkTargetUrl('https://[2606:4700:4700::1111]/in', strict)).toMatchObject({ ok: true });
  });

  it.each([
    'https://2130706433/', // decimal
    'https://0x7f000001/', // hex
    'https://0x7f.1/', // hex, short
    'https://0177.0.0.1/', // octal
    'https://127.1/', // short form
    'https://127.0.0.1./', // trailing dot
    'https://[::ffff:127.0.0.1]/', // IPv4-mapped
    'https://[::ffff:7f00:1]/',
    'https://[0:0:0:0:0:0:0:1]/',
    'https://[64:ff9b::a9fe:a9fe]/', // NAT64 of 169.254.169.254
    'https://[2002:a9fe:a9fe::]/', // 6to4 of 169.254.169.254
    'https://0/', // 0.0.0.0
    'https://10.0.0.1/',
    'https://0xa9.0xfe.0xa9.0xfe/', // 169.254.169.254
    'https://100.64.1.1/',
    'https://[fd00::1]/',
    'https://[fe80::1]/',
    'https://224.0.0.1/',
  ])('refuses %s as a non-public address', (url) => {
    expect(checkTargetUrl(url, strict)).toMatchObject({ ok: false, code: 'address_not_allowed' });
  });

  it('refuses other schemes, plain http and credentials', () => {
    expect(checkTargetUrl('http://hooks.example.com/', strict)).toMatchObject({ ok: false, code: 'scheme_not_allowed' });
    expect(checkTargetUrl('ftp://hooks.example.com/', strict)).toMatchObject({ ok: false, code: 'scheme_not_allowed' });
    expect(checkTargetUrl('file:///etc/passwd', strict)).toMatchObject({ ok: false, code: 'scheme_not_allowed' });
    expect(checkTargetUrl('https://user:pass@hooks.example.com/', strict)).toMatchObject({ ok: false, code: 'credentials_in_url' });
    expect(checkTargetUrl('https://token@hooks.example.com/', strict)).toMatchObject({ ok: false, code: 'credentials_in_url' });
    expect(checkTargetUrl('not a url', strict)).toMatchObject({ ok: false, code: 'invalid_url' });
  });

  it('allows http only to loopback, and only under the operator setting', () => {
    expect(checkTargetUrl('http://127.0.0.1:9000/hook', strict)).toMatchObject({ ok: false, code: 'scheme_not_allowed' });
    expect(checkTargetUrl('http://127.0.0.1:9000/hook', dev)).toMatchObject({ ok: true });
    expect(checkTargetUrl('http://[::1]:9000/hook', dev)).toMatchObject({ ok: true });
    expect(checkTargetUrl('http://localhost:9000/hook', dev)).toMatchObject({ ok: false, code: 'scheme_not_allowed' });
    expect(checkTargetUrl('http://hooks.example.com/', dev)).toMatchObject({ ok: false, code: 'scheme_not_allowed' });
    expect(checkTargetUrl('http://10.0.0.1/', dev)).toMatchObject({ ok: false, code: 'scheme_not_allowed' });
    expect(checkTargetUrl('https://127.0.0.1/', strict)).toMatchObject({ ok: false, code: 'address_not_allowed' });
  });
});
