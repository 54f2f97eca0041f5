//! How tools are offered to the model, and the harness's choice of skills
//! from the task's own words.
//!
//! Every tool definition is read by the model on every request, and on a
//! small CPU-bound model server reading is most of the time a step takes.
//! [`Disclosure::ByTask`] offers only the skills whose own words (name,
//! description, tool names and descriptions, parameter descriptions) the
//! task shares, without asking the model — a model step spent choosing costs
//! what it would save, and small models rarely open a skill on their own
//! (the book's "Run an agent" chapter has the figures). The other skills
//! stay on the menu of `skills__open`, and calling one of their tools
//! opens them.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::{BTreeSet, HashMap};

/// How the tools are offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Disclosure {
    /// Every tool of every offered skill, in every request.
    #[default]
    All,
    /// The built-ins and a menu of skills (`skills__open`); a skill's tools
    /// once the model opens it or calls one of them.
    OnDemand,
    /// As [`Disclosure::OnDemand`], with the skills the task's words point
    /// to open from the first request (each skill scored by the task's
    /// words that appear in its name and descriptions); every tool when
    /// the words point to none.
    ByTask,
}

/// A skill's score against a task: the summed rarity of the task's words
/// it shares.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Score {
    /// The skill.
    pub skill: String,
    /// Σ idf of the shared word stems.
    pub score: f64,
    /// The shared stems, for the audit log.
    pub words: Vec<String>,
}

/// What [`choose`] decided.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Choice {
    /// The skills to open, best first; empty when the task points to none
    /// (then every tool is offered).
    pub chosen: Vec<String>,
    /// Every skill's score, best first.
    pub scores: Vec<Score>,
}

/// Least score for a skill to be chosen: one word that at most half the
/// skills share (idf ≥ ln 2 with four skills), or several commoner ones. A
/// word every skill has (`file`, `host`) cannot choose one alone.
pub const MIN_SCORE: f64 = 0.6;

/// A skill within this share of the best one's score is chosen too: a
/// skill left out costs the task, one too many only costs its tokens.
pub const RATIO: f64 = 0.4;

/// Chooses from `skills` (name, the skill's words) the ones the task
/// points to. Deterministic: the same task and skills give the same choice.
pub fn choose(task: &str, skills: &[(String, String)]) -> Choice {
    let stemmer = Stemmer::create(Algorithm::English);
    let task_words = stems(&stemmer, task);
    let skill_words: Vec<BTreeSet<String>> =
        skills.iter().map(|(name, text)| stems(&stemmer, &format!("{name} {text}"))).collect();
    let mut df: HashMap<&str, usize> = HashMap::new();
    for words in &skill_words {
        for w in words {
            *df.entry(w.as_str()).or_default() += 1;
        }
    }
    let n = skills.len() as f64;
    let mut scores: Vec<Score> = skills
        .iter()
        .zip(&skill_words)
        .map(|((skill, _), words)| {
            let shared: Vec<String> =
                task_words.iter().filter(|w| words.contains(*w)).cloned().collect();
            let score = shared.iter().map(|w| idf(n, df[w.as_str()] as f64)).sum();
            Score { skill: skill.clone(), score, words: shared }
        })
        .collect();
    scores.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.skill.cmp(&b.skill)));
    let best = scores.first().map_or(0.0, |s| s.score);
    let chosen = if best < MIN_SCORE {
        Vec::new()
    } else {
        scores
            .iter()
            .filter(|s| s.score >= MIN_SCORE && s.score >= RATIO * best)
            .map(|s| s.skill.clone())
            .collect()
    };
    Choice { chosen, scores }
}

/// BM25's idf, never negative: a stem all skills have weighs ~0.1, one
/// skill's own stem ~1.2 (with four skills).
fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The distinct stems of `text`'s words: lowercased, split at anything not
/// alphanumeric, without stop words and one- or two-letter words (unless
/// they hold a digit, like `5xx`).
fn stems(stemmer: &Stemmer, text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| {
            (w.chars().count() >= 3 || w.chars().any(|c| c.is_ascii_digit()))
                && !STOP_WORDS.contains(&w.as_str())
        })
        .map(|w| stemmer.stem(&w).into_owned())
        .collect()
}

/// Words that say nothing about which skill a task needs.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "into", "onto", "than", "then", "there",
    "their", "them", "they", "what", "which", "who", "whom", "whose", "when", "where", "why",
    "how", "are", "was", "were", "been", "being", "have", "has", "had", "not", "but", "all", "any",
    "each", "every", "some", "only", "own", "too", "very", "can", "could", "should", "would",
    "will", "may", "might", "must", "shall", "you", "your", "yours", "our", "ours", "its", "his",
    "her", "she", "him", "one", "two", "use", "used", "using", "about", "after", "before", "also",
    "just", "out", "over", "under", "again", "once", "here", "other", "such", "both", "more",
    "most", "few", "same", "these", "those", "does", "did", "doing", "done", "yes", "get", "gets",
    "give", "please", "tell", "say", "says", "answer", "reply", "need", "want", "let", "make",
    "like", "via", "per", "without", "within", "never", "always", "don", "doesn", "isn", "aren",
    "won",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn catalogue() -> Vec<(String, String)> {
        [
            (
                "files",
                "Work with files on the host: list folders, read text files by lines, write or \
                 append to files, and search file contents. list read write search path folder",
            ),
            (
                "logs",
                "Analyse log files on the host: counts by level and status, most frequent errors, \
                 endpoints or clients, matching lines. scan top grep",
            ),
            (
                "web",
                "Read the web: fetch a URL's text, or save a web page's main content as a clean \
                 Markdown file. fetch to_markdown url",
            ),
            (
                "http_api",
                "Call JSON HTTP APIs (REST endpoints) on hosts the operator granted: GET, POST, \
                 PUT, PATCH, DELETE with a JSON body. request method url",
            ),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect()
    }

    #[test]
    fn a_task_opens_the_skills_its_words_point_to() {
        let skills = catalogue();
        assert_eq!(
            choose("Save the page at http://example.test/a as Markdown", &skills).chosen,
            ["web"]
        );
        assert_eq!(
            choose("Which client caused the most errors in logs/app.log?", &skills).chosen,
            ["logs"]
        );
        assert_eq!(
            choose("POST the order to the REST API and report its id", &skills).chosen,
            ["http_api"]
        );
        let both =
            choose("Search the folder notes/ for the word budget and append it to a list", &skills)
                .chosen;
        assert_eq!(both[0], "files", "{both:?}");
    }

    #[test]
    fn a_task_that_points_nowhere_chooses_nothing() {
        let skills = catalogue();
        let choice = choose("What is the capital of France?", &skills);
        assert!(choice.chosen.is_empty(), "{choice:?}");
        // A word every skill has cannot choose one alone.
        assert!(choose("the host", &skills).chosen.is_empty());
    }

    #[test]
    fn the_choice_is_stable_and_stems_words() {
        let skills = catalogue();
        let a = choose("fetching pages", &skills);
        assert_eq!(a, choose("fetching pages", &skills));
        assert_eq!(a.chosen, ["web"]);
        assert!(a.scores[0].words.contains(&"fetch".to_owned()), "{a:?}");
    }
}
