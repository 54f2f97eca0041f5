// The `feeds` skill: read RSS and Atom feeds, and search several at once.
//
// Which hosts are reachable is the permission table's `net`, enforced by the
// host for every request and redirect hop; this skill holds no list. The
// modules: load (fetch), feed (a document to entries), parse (XML), document
// (what a non-feed is), dates, text, search (matching).

import { defineSkill, invalidArguments, s, ToolError } from "../../../sdk/js/agent-reach.js";
import { parseUrl } from "../../../sdk/js/agent-reach-http.js";
import { newestFirst, SUMMARY_CHARS } from "./feed.js";
import { loadFeed } from "./load.js";
import { matches, queryWords } from "./search.js";

const DESCRIPTION =
  "Read RSS and Atom feeds (blogs, news sites, release notes, podcasts): a feed's newest entries " +
  "with title, link, date and a short summary, or a search of several feeds for entries about some " +
  "words. Only the hosts the operator granted are reachable.";

const INSTRUCTIONS = `# Reading feeds

## Which tool
- **\`read\`** to see what is new in one feed: its title and its newest entries first, each with
  \`title\`, \`link\`, \`date\` and \`summary\`. \`limit\` (default 10, at most 100) sets how many;
  \`total\` says how many the feed holds.
- **\`search\`** to find entries about something in one or more feeds: every word of \`query\`
  must appear in an entry's title or summary (any case; "deploy" also finds "deployment").
  Each hit names its \`feed\`. Use few, distinctive words; an empty result means no entry
  has them all — try fewer words before concluding.

## Things to know
- Give the feed's own URL (often ending in \`/feed\`, \`/rss\`, \`.xml\`, \`.rss\` or \`.atom\`). Given a
  web page instead, the error lists the feeds the page names: read one of those.
- \`date\` is ISO 8601 in UTC (\`2024-05-14T07:30:00Z\`), converted from the feed's own time zone;
  say dates to the user in their terms. An entry without a readable date has \`date: null\` and
  comes last.
- Summaries are plain text, cut at ${SUMMARY_CHARS} characters ("…" marks a cut); open \`link\` with a
  web tool to read a whole post.
- A \`DENIED\` error means the permission table does not grant that host: do not retry it with
  another spelling of the URL; tell the user the operator must add the host to \`net\`.
- \`NOT_FOUND\` is a URL that does not exist (HTTP 404/410) or a host name that does not resolve.
- In \`search\`, a feed that fails is listed in \`failed\` with its error; the others are still searched.
`;

/** Feeds fetched at once by `search`; the host allows 8 requests in flight per call. */
const PARALLEL = 4;

const skill = defineSkill({ name: "feeds", version: "0.1.0", description: DESCRIPTION, instructions: INSTRUCTIONS });

/** What a feed is, in a result. */
const feedInfo = (feed) => ({ title: feed.title, url: feed.url, link: feed.link, format: feed.format });

skill.tool(
  "read",
  {
    description:
      "Read an RSS or Atom feed: returns {feed: {title, url, link, format}, total, count, entries}, " +
      "the entries newest first, each {title, link, date, summary} with date as ISO 8601 UTC and " +
      `summary as plain text of at most ${SUMMARY_CHARS} characters. Use it to see the latest posts of a ` +
      "blog, news site, release feed or podcast. Give the feed URL; given a web page, the error " +
      "lists the feeds it names. To look for a topic in feeds, use `search`.",
    parameters: {
      url: s.string({ description: "The feed's URL, e.g. https://blog.example.com/feed.xml (https:// is assumed if left out)." }),
      limit: s.integer({ description: "How many of the newest entries to return.", minimum: 1, maximum: 100, default: 10 }),
    },
    examples: [
      { description: "The five newest posts of a blog.", arguments: { url: "https://blog.example.com/feed.xml", limit: 5 } },
    ],
  },
  async ({ url, limit }) => {
    const feed = await loadFeed(parseUrl(url));
    const entries = feed.entries.slice(0, limit);
    const result = { feed: feedInfo(feed), total: feed.entries.length, count: entries.length, entries };
    if (feed.entries.length > limit) {
      result.note = `Showing the newest ${limit} of ${feed.entries.length} entries; pass a larger limit (at most 100) for more.`;
    }
    return result;
  },
);

skill.tool(
  "search",
  {
    description:
      "Search the entries of one or more RSS or Atom feeds for words: returns the matching entries " +
      "newest first, each {feed, feed_url, title, link, date, summary}. An entry matches when every " +
      "word of `query` appears in its title or summary (case-insensitive; parts of words count). " +
      "Feeds that fail are listed in `failed`; the others are still searched. To list the latest " +
      "entries of a feed without a query, use `read`.",
    parameters: {
      urls: s.array(s.string(), { description: "The feed URLs to search (1 to 20).", minItems: 1, maxItems: 20 }),
      query: s.string({ description: "The words every hit must contain, e.g. \"postgres upgrade\".", minLength: 1, maxLength: 200 }),
      limit: s.integer({ description: "Most hits to return.", minimum: 1, maximum: 50, default: 10 }),
    },
    examples: [
      {
        description: "Find release posts about security fixes in two project blogs.",
        arguments: { urls: ["https://blog.example.org/atom.xml", "https://news.example.com/rss"], query: "security release" },
      },
    ],
  },
  async ({ urls, query, limit }) => {
    const words = queryWords(query);
    if (words.length === 0) throw invalidArguments(`search: the query ${JSON.stringify(query)} has no words`);
    // Every URL is checked before any is fetched: one typo fails the call at once.
    const targets = [...new Map(urls.map((u) => parseUrl(u)).map((u) => [u.href, u])).values()];
    const outcomes = await inBatches(targets, PARALLEL, (url) => loadFeed(url).then((feed) => ({ feed }), (error) => ({ url, error })));

    const failedFeeds = outcomes.filter((o) => o.error);
    const feeds = outcomes.filter((o) => o.feed).map((o) => o.feed);
    if (feeds.length === 0) {
      // Nothing was searched: the first failure, with its code, is the answer.
      const first = failedFeeds[0].error;
      if (!(first instanceof ToolError) || failedFeeds.length === 1) throw first;
      const more = failedFeeds.slice(1).map((f) => f.url.href);
      throw new ToolError(first.code, `${first.message} (no feed could be read: ${more.length} more failed: ${more.join(", ")})`);
    }
    const hits = [];
    for (const feed of feeds) {
      for (const entry of feed.entries) {
        if (!matches(entry, words)) continue;
        const hit = { feed: feed.title, feed_url: feed.url, title: entry.title, link: entry.link, date: entry.date, summary: entry.summary };
        Object.defineProperty(hit, "ms", { value: entry.ms, enumerable: false });
        hits.push(hit);
      }
    }
    const sorted = newestFirst(hits);
    const result = {
      query,
      words,
      searched: feeds.map((f) => ({ title: f.title, url: f.url, entries: f.entries.length })),
      total_matches: hits.length,
      count: Math.min(limit, hits.length),
      hits: sorted.slice(0, limit),
    };
    if (failedFeeds.length > 0) {
      result.failed = failedFeeds.map(({ url, error }) => ({
        url: url.href,
        error_code: error instanceof ToolError ? error.code : "failed",
        error: error instanceof Error ? error.message : String(error),
      }));
    }
    if (hits.length > limit) result.note = `Showing the newest ${limit} of ${hits.length} matching entries; pass a larger limit (at most 50) for more.`;
    if (hits.length === 0) result.note = `No entry contains all of: ${words.join(", ")}. Try fewer or other words.`;
    return result;
  },
);

/** `work` over `items`, at most `size` at a time, results in the items' order. */
async function inBatches(items, size, work) {
  const results = [];
  for (let i = 0; i < items.length; i += size) {
    results.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  }
  return results;
}

export const guest = skill.guest;
