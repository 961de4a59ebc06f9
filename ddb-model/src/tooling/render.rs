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

/// One attribute line of a Mermaid box: its type, name and a comment.
fn attr_line(out: &mut String, ty: &str, attr: &str, text: &str) -> std::fmt::Result {
    writeln!(out, "        {ty} {} \"{}\"", ident(attr), comment(text))
}

/// A Markdown table cell (`|` escaped, code in backticks).
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

impl TableModel {
    /// The model as a Mermaid `erDiagram`: one box per entity with its key attributes (their
    /// templates as comments, with an index's `when`), index keys, schema version attribute
    /// and stored fields with their DynamoDB types (the expiry field as the `N` seconds Time
    /// to Live reads; a multi-attribute index's key attributes, a vector field and a vector
    /// index's filter fields named as such); a tree's parent relation; an
    /// edge's inverse items; a box per unique constraint for its sentinel item, related to its
    /// owner; the table's vector indexes (name, attribute, dimensions, metric, filters) and
    /// Time to Live attribute as `%%` comments.
    pub fn mermaid(&self) -> String {
        let mut out = String::from("erDiagram\n");
        let _ = self.write_mermaid(&mut out);
        out
    }

    fn write_mermaid(&self, out: &mut String) -> std::fmt::Result {
        writeln!(out, "    %% table {}", comment(self.name))?;
        for v in self.vector_indexes {
            writeln!(out, "    %% vector index {}", self.vector_text(v))?;
        }
        if let Some(ttl) = self.ttl {
            writeln!(out, "    %% Time to Live on {ttl} (seconds since the epoch)")?;
        }
        for e in &self.entities {
            writeln!(out, "    {} {{", ident(e.name))?;
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
                let when = index.when.as_ref().map(|w| format!(" (when {w})")).unwrap_or_default();
                add(def.pk, format!("{} pk: {}{when}", index.index, index.pk));
                if let (Some(attr), Some(sk)) = (def.sk, &index.sk) {
                    add(attr, format!("{} sk: {}{when}", index.index, sk));
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
            for constant in e.constants {
                add(constant.attr, format!("constant: {}", constant.value));
            }
            for (attr, text) in &keys {
                attr_line(out, "S", attr, text)?;
            }
            if let Some(version) = e.schema {
                attr_line(out, "N", self.schema_attr, &format!("schema version {version}"))?;
            }
            for field in &s.fields {
                let mut text = field.rust_type.clone();
                let mut ty = attribute_type(&field.rust_type, field.in_key);
                if e.ttl == Some(field.attr.as_str()) {
                    ty = "N";
                    text.push_str(", Time to Live: seconds since the epoch");
                }
                for index in &s.multi_indexes {
                    for (which, attrs) in [("pk", &index.pk), ("sk", &index.sk)] {
                        if let Some(i) = attrs.iter().position(|a| a.attr == field.attr) {
                            write!(text, ", {} {which} {} of {}", index.index, i + 1, attrs.len())?;
                        }
                    }
                }
                for v in s.vectors.iter().filter(|v| v.attr == field.attr) {
                    write!(text, ", vector index {}", v.index)?;
                }
                for v in &e.vector_indexes {
                    if v.filters.iter().any(|f| f.name == field.attr) {
                        write!(text, ", filter of vector index {}", v.name)?;
                    }
                }
                attr_line(out, ty, &field.attr, &text)?;
            }
            writeln!(out, "    }}")?;
        }
        for e in &self.entities {
            for u in self.unique_sentinels(e) {
                let sentinel = ident(&format!("{}_unique_{}", e.name, u.def.field));
                writeln!(out, "    {sentinel} {{")?;
                attr_line(out, "S", self.pk, &format!("pk: {}", u.sentinel_pk))?;
                if let (Some(attr), Some(sk)) = (self.sk, u.sentinel_sk) {
                    attr_line(out, "S", attr, &format!("sk: {sk}"))?;
                }
                if let Some(attr) = self.type_attr {
                    attr_line(out, "S", attr, &format!("entity type: {}", u.type_name))?;
                }
                let owner = [("pk", u.owner_attrs[0]), ("sk", u.owner_attrs[1])];
                for (which, attr) in owner.iter().take(if self.sk.is_some() { 2 } else { 1 }) {
                    attr_line(out, "S", attr, &format!("the owner's {which}"))?;
                }
                writeln!(out, "    }}")?;
                writeln!(
                    out,
                    "    {} ||--o| {sentinel} : \"unique {} (scope {})\"",
                    ident(e.name),
                    comment(u.def.field),
                    comment(u.def.scope)
                )?;
            }
            if let Some(tree) = &e.shape.tree {
                writeln!(
                    out,
                    "    {0} |o--o{{ {0} : \"parent ({1} tree)\"",
                    ident(e.name),
                    tree.strategy
                )?;
            }
            if let Some(edge) = &e.edge {
                match &edge.inverse {
                    Inverse::Items { name, pk, sk } => {
                        writeln!(out, "    {} {{", ident(name))?;
                        attr_line(out, "S", self.pk, &format!("pk: {pk}"))?;
                        if let Some(sk_attr) = self.sk {
                            attr_line(out, "S", sk_attr, &format!("sk: {sk}"))?;
                        }
                        writeln!(out, "    }}")?;
                        writeln!(
                            out,
                            "    {} ||--|| {} : \"inverse item\"",
                            ident(e.name),
                            ident(name)
                        )?;
                    }
                    Inverse::Index { index, .. } => {
                        writeln!(out, "    %% {} is read backwards on {}", e.name, index)?;
                    }
                    Inverse::Symmetric | Inverse::None => {}
                }
            }
        }
        Ok(())
    }

    /// A vector index as text: name, attribute, dimensions, metric, partition, filters
    /// (`by_look on look: 3 dims, COSINE, partitioned by _type, filters brand (S)`).
    pub(super) fn vector_text(&self, v: &crate::model::VectorIndexDef) -> String {
        let mut text = format!("{} on {}: {} dims, {}", v.name, v.attr, v.dims, v.metric.as_str());
        if let (true, Some(attr)) = (v.by_type, self.type_attr) {
            let _ = write!(text, ", partitioned by {attr}");
        }
        if !v.filters.is_empty() {
            let filters: Vec<String> =
                v.filters.iter().map(|f| format!("{} ({})", f.name, f.kind.as_str())).collect();
            let _ = write!(text, ", filters {}", filters.join(", "));
        }
        text
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
