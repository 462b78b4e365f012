import { groupIp } from '../../lib/http/client-ip.js';

describe('groupIp', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(groupIp('203.0.113.7', 64)).toBe('203.0.113.7');
  });

  it('turns an IPv4-mapped IPv6 address into plain IPv4', () => {
    expect(groupIp('::ffff:203.0.113.7', 64)).toBe('203.0.113.7');
  });

  it('puts two addresses of one /64 in the same group', () => {
    expect(groupIp('2001:db8:1:2:aaaa::1', 64)).toBe(groupIp('2001:db8:1:2:ffff:ffff:ffff:ffff', 64));
  });

  it('separates addresses of neighbouring /64s', () => {
    expect(groupIp('2001:db8:1:2::1', 64)).not.toBe(groupIp('2001:db8:1:3::1', 64));
  });

  it('masks inside a 16-bit group for prefixes that are not multiples of 16', () => {
    expect(groupIp('2001:db8:ffff::1', 40)).toBe('2001:db8:ff00:0:0:0:0:0/40');
  });

  it('expands compressed forms and a trailing dotted quad', () => {
    expect(groupIp('::1', 64)).toBe('0:0:0:0:0:0:0:0/64');
    expect(groupIp('64:ff9b::192.0.2.33', 96)).toBe('64:ff9b:0:0:0:0:0:0/96');
  });

  it('drops a zone index', () => {
    expect(groupIp('fe80::1%eth0', 64)).toBe('fe80:0:0:0:0:0:0:0/64');
  });

  it('keeps every bit with a /128', () => {
    expect(groupIp('2001:db8::1', 128)).toBe('2001:db8::1');
  });

  describe('IPv4-mapped IPv6 in any form', () => {
    it.each([
      ['0:0:0:0:0:ffff:9.9.9.9', '9.9.9.9'],
      ['::ffff:808:808', '8.8.8.8'],
      ['::FFFF:1.2.3.4', '1.2.3.4'],
      ['0:0:0:0:0:FFFF:0102:0304', '1.2.3.4'],
      ['0::ffff:0a00:1', '10.0.0.1'],
      ['::ffff:1.2.3.4%eth0', '1.2.3.4'],
    ])('groups %s as the IPv4 address %s', (mapped, ipv4) => {
      expect(groupIp(mapped, 64)).toBe(ipv4);
    });

    it('keeps two mapped addresses of different IPv4 hosts apart', () => {
      expect(groupIp('0:0:0:0:0:ffff:9.9.9.9', 64)).not.toBe(groupIp('::ffff:808:808', 64));
    });

    it('maps under a /128 too', () => {
      expect(groupIp('::ffff:808:808', 128)).toBe('8.8.8.8');
    });

    it('leaves an address just outside ::ffff:0:0/96 as IPv6', () => {
      expect(groupIp('::fffe:808:808', 128)).toBe('::fffe:808:808');
    });
  });

  it('writes one address one way under a /128, whatever form it came in', () => {
    expect(groupIp('2001:DB8:0:0::1', 128)).toBe('2001:db8::1');
    expect(groupIp('2001:db8:0:0:1:0:0:1', 128)).toBe('2001:db8::1:0:0:1');
  });
});
