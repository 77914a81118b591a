import type { FeedbackAnalytics, FeedbackTotals } from './feedback-analytics.js';
import { buckets, graphBody, INTERVALS, type Interval } from './graphs.js';
import type { RowFilter } from './reader.js';

/**
 * Σ value·weight / Σ weight, 3 decimals; 0 without feedback (or with weights of 0 only), as the
 * reference's schema wants a number: the count beside it (`feedbacks` graph, `total`) tells.
 */
const weighted = (t: FeedbackTotals | undefined) =>
  t && t.weightSum > 0 ? Number((t.weightedSum / t.weightSum).toFixed(3)) : 0;

/** `feedbacks`: how many feedbacks were given, per bucket. */
export async function feedbackCountGraph(feedback: FeedbackAnalytics, filter: RowFilter, interval: Interval) {
  const [whole, per] = await Promise.all([feedback.byTime(filter, null), feedback.byTime(filter, INTERVALS[interval])]);
  const points = buckets(filter, interval).map(({ bucket, timestamp }) => ({
    timestamp,
    total: per.get(bucket)?.total ?? 0,
  }));
  return graphBody(filter, interval, { total: whole.get(0)?.total ?? 0 }, points);
}

/** `feedbacks/weighted`: the weighted average score, per bucket. */
export async function feedbackWeightedGraph(feedback: FeedbackAnalytics, filter: RowFilter, interval: Interval) {
  const [whole, per] = await Promise.all([feedback.byTime(filter, null), feedback.byTime(filter, INTERVALS[interval])]);
  const points = buckets(filter, interval).map(({ bucket, timestamp }) => ({
    timestamp,
    avg: weighted(per.get(bucket)),
  }));
  return graphBody(filter, interval, { avg: weighted(whole.get(0)) }, points);
}

/** `feedbacks/scores`: how many feedbacks gave each score, every score from −10 to 10 listed. */
export async function feedbackScoresGraph(feedback: FeedbackAnalytics, filter: RowFilter) {
  const byScore = await feedback.byScore(filter);
  const points = [];
  for (let score = -10; score <= 10; score++) points.push({ score, total: byScore.get(score)?.total ?? 0 });
  return graphBody(filter, null, { total: points.reduce((sum, p) => sum + p.total, 0) }, points);
}

/** `feedbacks/ai-models`: feedback per model of the traces it is about, most feedback first. */
export async function feedbackModelsGraph(feedback: FeedbackAnalytics, filter: RowFilter) {
  const byModel = await feedback.byModel(filter);
  const points = [...byModel.entries()]
    .map(([ai_model, t]) => ({ ai_model, total: t.total, avg_weighted_feedback: weighted(t) }))
    .sort((a, b) => b.total - a.total || a.ai_model.localeCompare(b.ai_model));
  return graphBody(filter, null, {}, points);
}
