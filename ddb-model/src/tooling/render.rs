//! The model as a Mermaid entity-relationship diagram and as a Markdown access-pattern table.

use std::fmt::Write;

use super::{Inverse, TableModel, attribute_type};

/// A Mermaid identifier: letters, digits and `_` only.
fn ident(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// A Mermaid quoted comment (`"` written as an entity).
fn comment(text: &str) -> String {
    text.replace('"', "#quot;")
}

/// A Markdown table cell (`|` escaped, code in backticks).
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

impl TableModel {
    /// The model as a Mermaid `erDiagram`: one box per entity with its key attributes (their
    /// templates as comments), index keys and stored fields with their DynamoDB types; a
    /// tree's parent relation; an edge's inverse items.
    pub fn mermaid(&self) -> String {
        let mut out = String::from("erDiagram\n");
        let _ = writeln!(out, "    %% table {}", comment(self.name));
        for e in &self.entities {
            let _ = writeln!(out, "    {} {{", ident(e.name));
            let s = &e.shape;
            // Each attribute once: an attribute two index keys write lists both templates.
            let mut keys: Vec<(&str, String)> = Vec::new();
            let mut add = |attr: &'static str, text: String| match keys
                .iter_mut()
                .find(|(a, _)| *a == attr)
            {
                Some((_, t)) => *t = format!("{t} or {text}"),
                None => keys.push((attr, text)),
            };
            add(self.pk, format!("pk: {}", s.pk));
            if let (Some(sk_attr), Some(sk)) = (self.sk, &s.sk) {
                add(sk_attr, format!("sk: {sk}"));
            }
            for index in &s.indexes {
                let Some(def) = self.indexes.iter().find(|d| d.name == index.index) else {
                    continue;
                };
                add(def.pk, format!("{} pk: {}", index.index, index.pk));
                if let (Some(attr), Some(sk)) = (def.sk, &index.sk) {
                    add(attr, format!("{} sk: {}", index.index, sk));
                }
            }
            if let Some(tree) = &s.tree
                && let Some(def) =
                    tree.index.as_deref().and_then(|i| self.indexes.iter().find(|d| d.name == i))
            {
                add(def.pk, format!("{} pk: the tree's {} index", def.name, tree.strategy));
                if let Some(attr) = def.sk {
                    add(attr, format!("{} sk: the tree's {} index", def.name, tree.strategy));
                }
            }
            if let Some(attr) = self.type_attr {
                add(attr, format!("entity type: {}", e.name));
            }
            for (attr, text) in &keys {
                let _ = writeln!(out, "        S {} \"{}\"", ident(attr), comment(text));
            }
            for field in &s.fields {
                let ty = attribute_type(&field.rust_type, field.in_key);
                let _ = writeln!(
                    out,
                    "        {ty} {} \"{}\"",
                    ident(&field.attr),
                    comment(&field.rust_type)
                );
            }
            let _ = writeln!(out, "    }}");
        }
        for e in &self.entities {
            if let Some(tree) = &e.shape.tree {
                let _ = writeln!(
                    out,
                    "    {0} |o--o{{ {0} : \"parent ({1} tree)\"",
                    ident(e.name),
                    tree.strategy
                );
            }
            if let Some(edge) = &e.edge {
                match &edge.inverse {
                    Inverse::Items { name, pk, sk } => {
                        let _ = writeln!(out, "    {} {{", ident(name));
                        let _ =
                            writeln!(out, "        S {} \"pk: {}\"", ident(self.pk), comment(pk));
                        if let Some(sk_attr) = self.sk {
                            let _ = writeln!(
                                out,
                                "        S {} \"sk: {}\"",
                                ident(sk_attr),
                                comment(sk)
                            );
                        }
                        let _ = writeln!(out, "    }}");
                        let _ = writeln!(
                            out,
                            "    {} ||--|| {} : \"inverse item\"",
                            ident(e.name),
                            ident(name)
                        );
                    }
                    Inverse::Index { index, .. } => {
                        let _ = writeln!(out, "    %% {} is read backwards on {}", e.name, index);
                    }
                    Inverse::Symmetric | Inverse::None => {}
                }
            }
        }
        out
    }

    /// The access patterns as one Markdown table: entity, pattern, call, key condition,
    /// table or index, requests.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## Access patterns of `{}`\n\n| entity | pattern | call | key | reads | requests |\n| --- | --- | --- | --- | --- | --- |\n",
            self.name
        );
        for (e, p) in self.patterns() {
            let code =
                |t: &str| if t.is_empty() { String::new() } else { format!("`{}`", cell(t)) };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                e.name,
                cell(&p.name),
                code(&p.call),
                code(&p.key),
                cell(&p.target),
                cell(&p.requests)
            );
        }
        out
    }
}
