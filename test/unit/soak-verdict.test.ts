import { describe, expect, it } from 'vitest';
import {
  idleHeapLine,
  judgeIdleHeap,
  judgeLiveHeap,
  judgeRss,
  liveHeapLine,
  memoryHeadline,
  verdictLine,
} from '../../scripts/soak-verdict.js';

/** RSS every 5 s for `minutes`: a sawtooth from `floor` up by `tooth` MB every 60 s, the floor rising `leakPerMin`. */
function soak(minutes: number, floor: number, tooth: number, leakPerMin: number) {
  return Array.from({ length: minutes * 12 }, (_, i) => {
    const atS = i * 5;
    return { atS, mb: floor + leakPerMin * (atS / 60) + tooth * ((atS % 60) / 60) };
  });
}

describe('the soak verdict', () => {
  it('calls a sawtooth flat even when the run ends at the top of a tooth', () => {
    // Means over halves would differ by up to a whole tooth here, depending on where the run stops.
    const samples = soak(10, 200, 60, 0).slice(0, 12 * 10 - 1);
    const verdict = judgeRss(samples, 30)!;
    expect(verdict.grew).toBe(false);
    expect(verdict.floorLast - verdict.floorFirst).toBeCloseTo(0, 5);
    expect(verdictLine(samples, 30)).toMatch(/^RSS after warm-up flat: /);
  });

  it('calls a rising floor under the sawtooth growth, with its slope', () => {
    const samples = soak(10, 200, 60, 2);
    const verdict = judgeRss(samples, 30)!;
    expect(verdict.grew).toBe(true);
    expect(verdict.slopeMbPer10Min).toBeGreaterThan(15);
    expect(verdictLine(samples, 30)).toMatch(/^RSS after warm-up GREW: /);
  });

  it('names the figure it judges', () => {
    const samples = soak(10, 20, 0, 0);
    expect(verdictLine(samples, 30, 'memory outside the V8 heap')).toMatch(
      /^memory outside the V8 heap after warm-up flat: /,
    );
  });

  it('needs enough samples to judge', () => {
    expect(judgeRss(soak(1, 200, 0, 0).slice(0, 5), 30)).toBeNull();
    expect(verdictLine([], 30)).toMatch(/too few samples/);
  });
});

/**
 * A 10-minute soak after a 2-minute warm-up as the probe sees it: RSS every 5 s, and the live heap
 * after each major GC at `gcAtS`. Between collections the heap fills by `fillPerMin` MB a minute
 * (RSS with it); at each one it drops back to the live heap, which rises `leakPerMin` MB a minute.
 */
function gcSoak(gcAtS: readonly number[], live: number, fillPerMin: number, leakPerMin: number, endS = 600) {
  const liveAt = (atS: number) => live + leakPerMin * (atS / 60);
  const gcs = gcAtS.map((atS) => ({ atS, mb: liveAt(atS) }));
  const rss = [];
  for (let atS = 120; atS <= endS; atS += 5) {
    const lastGc = Math.max(...gcAtS.filter((t) => t <= atS));
    rss.push({ atS, mb: 80 + liveAt(atS) + fillPerMin * ((atS - lastGc) / 60) });
  }
  return { gcs, rss, periodS: endS - 120 };
}
const every = (s: number) => Array.from({ length: Math.floor(480 / s) + 1 }, (_, i) => 120 + i * s);
/** A flat 28 MB outside V8 beside `rss`'s samples. */
const flatOutside = (rss: ReadonlyArray<{ atS: number }>) =>
  judgeRss(
    rss.map((s) => ({ atS: s.atS, mb: 28 })),
    30,
  );

describe('the live heap after major GC', () => {
  it('calls a long tooth with a flat heap after each GC not a leak, though RSS grew', () => {
    // Issue #19's last run: major GCs minutes apart, none in the last third of the run, so the
    // last third of RSS sits high in a tooth and its floor "grew".
    const { gcs, rss, periodS } = gcSoak([120, 250, 380], 45, 10, 0);
    const rssVerdict = judgeRss(rss, 30)!;
    expect(rssVerdict.grew).toBe(true);
    const live = judgeLiveHeap(gcs, periodS)!;
    expect(live).toMatchObject({ grew: false, method: 'slope', gcs: 3 });
    expect(live.last - live.first).toBeCloseTo(0, 5);
    expect(liveHeapLine(gcs, periodS)).toMatch(/^live heap \(after each major GC\) after warm-up flat: /);
    expect(memoryHeadline({ liveHeap: live, outsideV8: flatOutside(rss), rss: rssVerdict })).toMatch(
      /^memory verdict: NOT A LEAK: RSS only grew/,
    );
  });

  it('judges two collections far apart, as a 10-minute soak at 50 requests/s may hold', () => {
    // A soak run for this: major GCs at 207 and 559 s after warm-up, 43.4 and 43.9 MB, while
    // RSS's floor "grew" 17 MB (V8 sized the heap up at the second one).
    const { gcs, periodS } = gcSoak([207, 559], 43.4, 4, 0.1);
    const live = judgeLiveHeap(gcs, periodS)!;
    expect(live).toMatchObject({ grew: false, method: 'slope', gcs: 2 });
    // The line's rise over the whole judged period (480 s), not just between the two.
    expect(live.last - live.first).toBeCloseTo(0.8, 5);
    expect(liveHeapLine(gcs, periodS)).toMatch(
      /^live heap \(after each major GC\) after warm-up flat: a line through 2 major GCs 352 s apart goes 43\.7 → 44\.5 MB over the 480 s/,
    );
    expect(judgeLiveHeap(gcSoak([207, 559], 43.4, 4, 1).gcs, periodS)!.grew).toBe(true);
    // A 1,200-s soak: two major GCs 410 s apart, a third of its 1,080 s after warm-up.
    const long = [
      { atS: 210, mb: 42.9 },
      { atS: 620, mb: 43.6 },
    ];
    expect(judgeLiveHeap(long, 1080)).toMatchObject({ grew: false, gcs: 2 });
  });

  it('judges thirds of the collections by their lowest figure, so one late high one is not growth', () => {
    const { gcs, periodS } = gcSoak(every(40), 45, 10, 0);
    // Floating garbage: objects allocated while a collection was marking survive it.
    gcs[gcs.length - 1] = { ...gcs.at(-1)!, mb: 53 };
    const live = judgeLiveHeap(gcs, periodS)!;
    expect(live.method).toBe('thirds');
    expect(live.grew).toBe(false);
  });

  it('calls a rising heap after each GC growth, a leak in JavaScript, with few or many collections', () => {
    for (const gcAtS of [[120, 250, 380], every(40)]) {
      const { gcs, rss, periodS } = gcSoak(gcAtS, 45, 10, 2);
      const live = judgeLiveHeap(gcs, periodS)!;
      expect(live.grew).toBe(true);
      expect(live.slopeMbPer10Min).toBeCloseTo(20, 5);
      expect(liveHeapLine(gcs, periodS)).toMatch(/^live heap \(after each major GC\) after warm-up GREW: /);
      const headline = memoryHeadline({ liveHeap: live, outsideV8: flatOutside(rss), rss: judgeRss(rss, 30) });
      expect(headline).toBe('memory verdict: GREW: the live heap after major GC (a leak in JavaScript)');
    }
  });

  it('names memory outside V8 when that is what grew', () => {
    const { gcs, rss, periodS } = gcSoak(every(100), 45, 10, 0);
    const headline = memoryHeadline({
      liveHeap: judgeLiveHeap(gcs, periodS),
      outsideV8: judgeRss(
        rss.map((s) => ({ atS: s.atS, mb: 28 + s.atS / 20 })),
        30,
      ),
      rss: judgeRss(rss, 30),
    });
    expect(headline).toMatch(/^memory verdict: GREW: memory outside the V8 heap/);
    expect(headline).not.toMatch(/live heap/);
  });

  it('says when too few major GCs happened to judge, rather than guessing', () => {
    // One collection, or several within less than a third of the period, say nothing about its end.
    const { gcs, rss } = gcSoak([120, 270], 45, 10, 2);
    expect(judgeLiveHeap(gcs, 480)).toBeNull();
    expect(judgeLiveHeap(gcs.slice(0, 1), 480)).toBeNull();
    const bunched = [120, 140, 160].map((atS) => ({ atS, mb: 45 }));
    expect(judgeLiveHeap(bunched, 480)).toBeNull();
    expect(liveHeapLine(bunched, 480)).toMatch(/too few major GCs to judge \(3 in 480 s, over 40 s.*soak longer$/);
    expect(liveHeapLine([], 480)).toMatch(/too few major GCs to judge \(0 in 480 s/);

    const rssVerdict = judgeRss(rss, 30)!;
    expect(rssVerdict.grew).toBe(true);
    expect(memoryHeadline({ liveHeap: null, outsideV8: flatOutside(rss), rss: rssVerdict })).toBe(
      'memory verdict: CANNOT TELL: RSS grew, memory outside V8 flat; not judged: the live heap (too few major GCs after warm-up); soak longer',
    );
    const flat = gcSoak([120, 270], 45, 0, 0).rss;
    expect(memoryHeadline({ liveHeap: null, outsideV8: flatOutside(flat), rss: judgeRss(flat, 30) })).toMatch(
      /^memory verdict: no growth seen: RSS flat, memory outside V8 flat; not judged: the live heap/,
    );
  });

  it('calls memory flat when every figure is', () => {
    const { gcs, rss, periodS } = gcSoak(every(40), 45, 0, 0);
    const headline = memoryHeadline({
      liveHeap: judgeLiveHeap(gcs, periodS),
      outsideV8: flatOutside(rss),
      rss: judgeRss(rss, 30),
    });
    expect(headline).toBe('memory verdict: flat: the live heap after major GC, memory outside V8 and RSS');
  });
});

describe('the live heap at idle (the idle brackets)', () => {
  // The collections during the load of the run that asked for the brackets: two after warm-up,
  // both before 207 s of a 600-s soak, so they say nothing about its end.
  const fewDuringLoad = judgeLiveHeap(
    [
      { atS: 100, mb: 43.1 },
      { atS: 207, mb: 43.0 },
    ],
    480,
  );
  const { rss } = gcSoak([120, 207], 43, 10, 0);

  it("calls the live heap flat when svcgw's idle GC leaves about the same at both ends, and that decides", () => {
    const afterWarmup = { mb: 38.2, waitedS: 14 };
    const atEnd = { mb: 39.6, waitedS: 12 };
    expect(judgeIdleHeap(afterWarmup, atEnd)).toEqual({ grew: false, first: 38.2, last: 39.6 });
    expect(idleHeapLine(afterWarmup, atEnd)).toMatch(
      /^live heap at idle .*, after warm-up 38\.2 MB → at the end 39\.6 MB \(\+1\.4 MB\): flat \("grew" means more than 5 MB and 5 %; the GCs came 14 and 12 s after the load paused\)$/,
    );
    expect(fewDuringLoad).toBeNull();
    const rssVerdict = judgeRss(rss, 30)!;
    expect(rssVerdict.grew).toBe(true);
    const idleHeap = judgeIdleHeap(afterWarmup, atEnd);
    // The collections during the load could not tell; the brackets can, so no "CANNOT TELL".
    expect(memoryHeadline({ liveHeap: fewDuringLoad, idleHeap, outsideV8: flatOutside(rss), rss: rssVerdict })).toBe(
      'memory verdict: NOT A LEAK: RSS only grew (the V8 heap sized up between major GCs: GC timing); the live heap at idle and memory outside V8 were flat',
    );
    const flat = gcSoak([120, 207], 43, 0, 0).rss;
    expect(
      memoryHeadline({ liveHeap: fewDuringLoad, idleHeap, outsideV8: flatOutside(flat), rss: judgeRss(flat, 30) }),
    ).toBe('memory verdict: flat: the live heap at idle, memory outside V8 and RSS');
  });

  it('calls more than 5 MB and 5 % between the idle collections growth, even when the collections during the load look flat', () => {
    const afterWarmup = { mb: 38.2, waitedS: 14 };
    const grown = { mb: 44.0, waitedS: 15 };
    expect(judgeIdleHeap(afterWarmup, grown)).toMatchObject({ grew: true });
    expect(idleHeapLine(afterWarmup, grown)).toMatch(/38\.2 MB → at the end 44\.0 MB \(\+5\.8 MB\): GREW/);
    // 5 % of a larger heap is more than 5 MB: 6 MB on 150 MB is not growth.
    expect(judgeIdleHeap({ mb: 150, waitedS: 14 }, { mb: 156, waitedS: 14 })!.grew).toBe(false);
    expect(judgeIdleHeap({ mb: 150, waitedS: 14 }, { mb: 158, waitedS: 14 })!.grew).toBe(true);
    // A shrinking heap is not growth.
    expect(judgeIdleHeap({ mb: 45, waitedS: 14 }, { mb: 30, waitedS: 14 })!.grew).toBe(false);

    const { gcs, periodS } = gcSoak(every(40), 45, 10, 0);
    const duringLoad = judgeLiveHeap(gcs, periodS)!;
    expect(duringLoad.grew).toBe(false);
    expect(
      memoryHeadline({
        liveHeap: duringLoad,
        idleHeap: judgeIdleHeap(afterWarmup, grown),
        outsideV8: flatOutside(rss),
        rss: judgeRss(rss, 30),
      }),
    ).toBe('memory verdict: GREW: the live heap at idle (a leak in JavaScript)');
  });

  it('says when an idle GC did not come within the limit, and falls back on the collections during the load', () => {
    const afterWarmup = { mb: 38.2, waitedS: 14 };
    const none = { mb: null, waitedS: 60 };
    expect(judgeIdleHeap(afterWarmup, none)).toBeNull();
    expect(judgeIdleHeap(none, afterWarmup)).toBeNull();
    expect(idleHeapLine(afterWarmup, none)).toMatch(
      /^live heap at idle .*: not judged: no idle GC came at the end \(waited 60 s\); after warm-up 38\.2 MB, at the end none$/,
    );
    expect(idleHeapLine(none, none)).toMatch(
      /no idle GC came after warm-up \(waited 60 s\) nor at the end \(waited 60 s\)/,
    );

    const rssVerdict = judgeRss(rss, 30)!;
    expect(
      memoryHeadline({ liveHeap: fewDuringLoad, idleHeap: null, outsideV8: flatOutside(rss), rss: rssVerdict }),
    ).toBe(
      'memory verdict: CANNOT TELL: RSS grew, memory outside V8 flat; not judged: the live heap (no idle GC in a bracket, and too few major GCs during the load); soak longer',
    );
    const { gcs, periodS } = gcSoak(every(40), 45, 10, 0);
    expect(
      memoryHeadline({
        liveHeap: judgeLiveHeap(gcs, periodS),
        idleHeap: null,
        outsideV8: flatOutside(rss),
        rss: rssVerdict,
      }),
    ).toMatch(/^memory verdict: NOT A LEAK: .*; the live heap after major GC and memory outside V8 were flat$/);
  });

  it('tells the collections during the load apart from the brackets, and what to do when they say nothing', () => {
    expect(liveHeapLine([], 480, 'live heap after each major GC during the load', 'the idle brackets judge')).toMatch(
      /^live heap after each major GC during the load after warm-up: too few major GCs to judge .*; the idle brackets judge$/,
    );
  });
});
