import { trackerSegment } from '../../lib/keys/key.builder.js';

describe('trackerSegment', () => {
  it('keeps a short plain tracker as it is', () => {
    expect(trackerSegment('ip:203.0.113.7')).toBe('ip:203.0.113.7');
  });

  it('keeps the UTF-8 digest of well-formed text, so existing keys stay where they are', () => {
    expect(trackerSegment('user:élodie')).toBe('#j90ndzyWwOoGfGcBW0dVBHYUTuHtZFHn');
  });

  it('gives a lone high surrogate, a lone low surrogate and U+FFFD three different segments', () => {
    const segments = new Set(['a\ud800', 'a\udfff', 'a\ufffd'].map(trackerSegment));
    expect(segments.size).toBe(3);
  });

  it('gives a lone surrogate a segment of the same bounded shape as any hashed tracker', () => {
    expect(trackerSegment('a\ud800')).toMatch(/^#[A-Za-z0-9_-]{32}$/);
  });

  it('treats a well-formed surrogate pair as text', () => {
    expect(trackerSegment('a\ud83d\ude00')).not.toBe(trackerSegment('a\ufffd\ufffd'));
  });
});
