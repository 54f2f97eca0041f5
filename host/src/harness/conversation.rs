//! The run's conversation as the harness keeps it: every message with the
//! step it came from and whether the person wrote it. Compaction needs
//! both — it cites steps in its checkpoint, and it never rewrites what the
//! person said.

use crate::model::Message;

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The message as the model sees it.
    pub message: Message,
    /// The model request it belongs to (0: before the first).
    pub step: usize,
    /// Written by the person (the task, a correction during the run), not
    /// by the harness, the model or a tool. Kept verbatim through every
    /// compaction.
    pub from_person: bool,
}

/// The conversation of one run, the task first.
#[derive(Clone, Debug)]
pub struct Conversation {
    turns: Vec<Turn>,
    step: usize,
}

impl Conversation {
    /// A conversation that starts with the person's `task`.
    pub fn new(task: &str) -> Conversation {
        Conversation {
            turns: vec![Turn { message: Message::user(task), step: 0, from_person: true }],
            step: 0,
        }
    }

    /// A worker's conversation: it starts with the `brief` the agent that
    /// delegated wrote (its task, its input — which may quote pages —, its
    /// profile's instructions). Not the person's words: the memory rules
    /// and the summariser must never take it for them. It is still kept
    /// first through every compaction, as the task.
    pub fn delegated(brief: &str) -> Conversation {
        Conversation {
            turns: vec![Turn { message: Message::user(brief), step: 0, from_person: false }],
            step: 0,
        }
    }

    /// Messages pushed from now on belong to model request `step`.
    pub fn set_step(&mut self, step: usize) {
        self.step = step;
    }

    /// A message from the model, a tool or the harness.
    pub fn push(&mut self, message: Message) {
        self.turns.push(Turn { message, step: self.step, from_person: false });
    }

    /// A message the person wrote during the run.
    pub fn push_person(&mut self, text: impl Into<String>) {
        self.turns.push(Turn { message: Message::user(text), step: self.step, from_person: true });
    }

    /// The messages, in order.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.turns.iter().map(|t| &t.message)
    }

    /// The turns, in order.
    pub fn turns(&self) -> &[Turn] {
        &self.turns
    }

    /// Replaces every turn (after a compaction); the first stays the task.
    pub(super) fn replace(&mut self, turns: Vec<Turn>) {
        debug_assert!(
            turns.first().zip(self.turns.first()).is_some_and(|(new, old)| new == old),
            "the task stays first"
        );
        self.turns = turns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workers_brief_is_its_task_but_not_the_persons_words() {
        let person = Conversation::new("Save the page.");
        let worker = Conversation::delegated("[worker: web] Save the page.");
        assert!(person.turns()[0].from_person);
        assert!(
            !worker.turns()[0].from_person,
            "the memory rules read from_person as the user's words"
        );
        assert_eq!(
            (worker.turns()[0].step, worker.turns()[0].message.content.as_str()),
            (0, "[worker: web] Save the page.")
        );
    }
}
