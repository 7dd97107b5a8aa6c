//! The built-in tools fiskgen can serve, by their descriptors in `fiskgen-contract` (names,
//! descriptions and input schemas, which the runtime serves from the same place).

use fiskgen_contract::builtins;
use serde_json::{Map, Value};

use crate::ir::Builtin;

impl Builtin {
    /// Every built-in, in serving order.
    pub const ALL: [Builtin; 6] = [
        Builtin::ReadFile,
        Builtin::Base64Encode,
        Builtin::KnowledgeSearch,
        Builtin::KnowledgeRead,
        Builtin::KnowledgeList,
        Builtin::KnowledgeEnumerate,
    ];

    /// The knowledge tools, served together when `harness.knowledge.enabled`.
    pub const KNOWLEDGE: [Builtin; 4] = [
        Builtin::KnowledgeSearch,
        Builtin::KnowledgeRead,
        Builtin::KnowledgeList,
        Builtin::KnowledgeEnumerate,
    ];

    /// The MCP tool name.
    pub fn name(self) -> &'static str {
        self.descriptor().name
    }

    /// Looks a built-in up by its tool name.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL
            .into_iter()
            .find(|builtin| builtin.name() == name)
    }

    /// What clients are told about it (`fiskgen-contract`, shared with the runtime).
    pub fn descriptor(self) -> builtins::Descriptor {
        match self {
            Builtin::ReadFile => builtins::READ_FILE,
            Builtin::Base64Encode => builtins::BASE64_ENCODE,
            Builtin::KnowledgeSearch => builtins::KNOWLEDGE_SEARCH,
            Builtin::KnowledgeRead => builtins::KNOWLEDGE_READ,
            Builtin::KnowledgeList => builtins::KNOWLEDGE_LIST,
            Builtin::KnowledgeEnumerate => builtins::KNOWLEDGE_ENUMERATE,
        }
    }

    /// The description sent to clients.
    pub fn description(self) -> &'static str {
        self.descriptor().description
    }

    /// Whether the tool only reads (every built-in does).
    pub fn read_only(self) -> bool {
        true
    }

    /// The input schema sent to clients.
    pub fn input_schema(self) -> Map<String, Value> {
        match serde_json::from_str(self.descriptor().input_schema) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }
}
