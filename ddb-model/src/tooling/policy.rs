//! The IAM policy that confines a principal to one tenant's partitions at the service, as
//! [`Db::for_tenant`](crate::Db::for_tenant) does in the library: `dynamodb:LeadingKeys`
//! conditions on the table and on each index keyed by templates.
//!
//! See [`TableModel::tenant_policy`] for what the service checks.

use serde_json::{Value, json};

use super::TableModel;

/// The actions a tenant's principal is granted on the table: the item and query actions
/// whose keys `dynamodb:LeadingKeys` sees (transactions are authorized as these).
pub const TABLE_ACTIONS: [&str; 8] = [
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
];

/// Where the policy applies and whom it confines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyTarget {
    /// The physical table name.
    pub table: String,
    /// The AWS partition of the ARNs (`aws`, `aws-cn`, ...).
    pub partition: String,
    /// The Region of the ARNs (`*` for every one).
    pub region: String,
    /// The account of the ARNs (`*` for every one).
    pub account: String,
    /// The condition key whose value is the principal's tenant id, substituted as a policy
    /// variable (`aws:PrincipalTag/tenant` becomes `${aws:PrincipalTag/tenant}`).
    pub tenant_key: String,
}

impl PolicyTarget {
    /// The table `table` in every Region and account of partition `aws`, with the tenant in
    /// the principal tag `tenant`.
    pub fn new(table: impl Into<String>) -> PolicyTarget {
        PolicyTarget {
            table: table.into(),
            partition: "aws".into(),
            region: "*".into(),
            account: "*".into(),
            tenant_key: "aws:PrincipalTag/tenant".into(),
        }
    }

    fn table_arn(&self) -> String {
        let PolicyTarget { partition, region, account, table, .. } = self;
        format!("arn:{partition}:dynamodb:{region}:{account}:table/{table}")
    }
}

/// `text` with IAM's special characters (`*`, `?`, `$`) written so that a `StringLike`
/// pattern matches them literally.
fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '*' => out.push_str("${*}"),
            '?' => out.push_str("${?}"),
            '$' => out.push_str("${$}"),
            c => out.push(c),
        }
    }
    out
}

impl TableModel {
    /// The IAM policy (JSON) that allows a principal the items of its own tenant only, with
    /// the tenant's partitions as [`Db::for_tenant`](crate::Db::for_tenant) reaches them: a
    /// statement on the table ([`TABLE_ACTIONS`]) and one per index keyed by templates
    /// (`dynamodb:Query`), each with `ForAllValues:StringLike` on `dynamodb:LeadingKeys`:
    /// the tenant literal and the tenant (`ORG#${aws:PrincipalTag/tenant}`), alone or followed
    /// by a separator and anything. `None` for a table without tenants
    /// (`#[table(tenant = "..")]`).
    ///
    /// What the service checks, and so what the policy says:
    ///
    /// - `dynamodb:LeadingKeys` is the set of partition key values a request names: every key of
    ///   a batch, the key of a single-item request, the partition of a query; for a query of an
    ///   index, the index's partition key. It is multi-valued, so the condition is
    ///   `ForAllValues:StringLike`: every value must be the tenant's.
    /// - `ForAllValues` holds for a request that names no key at all: a `Scan`. The policy grants
    ///   no scan (and the scoped handle refuses them too), nor PartiQL.
    /// - Transactions are authorized action by action (`TransactWriteItems` as `PutItem`,
    ///   `UpdateItem`, `DeleteItem`, `ConditionCheckItem`; `TransactGetItems` as `GetItem`), so
    ///   the table statement covers them.
    /// - The tenant is the value of a condition key the user names (a principal tag,
    ///   `aws:PrincipalTag/tenant`, or any key usable as a policy variable), substituted with
    ///   `${..}`. The service substitutes it as it is, while the library escapes the tenant id in
    ///   keys (`# / | ~ :` and `%` as `%XX`): an id holding one of those characters is written
    ///   `acme%23x` in keys but `acme#x` in the policy, and `acme#x` would match keys of tenant
    ///   `acme` (`ORG#acme#x..`). The policy therefore also requires the key to be present and to
    ///   hold none of them (`Null`, `StringNotLike`): such a principal is refused everything, never
    ///   given another tenant's items. Give tenants ids without those characters (principal tag
    ///   values cannot hold `#`, `|`, `~` or `%`, but can hold `:` and `/`).
    ///
    /// ```
    /// use ddb_model::Table;
    /// use ddb_model::tooling::{PolicyTarget, TableModel};
    ///
    /// #[derive(Table)]
    /// #[table(name = "saas", tenant = "ORG#", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
    /// struct Saas;
    ///
    /// let policy = TableModel::of::<Saas>().tenant_policy(&PolicyTarget::new("saas")).unwrap();
    /// let leading = &policy["Statement"][1]["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"];
    /// assert_eq!(leading[0], "ORG#${aws:PrincipalTag/tenant}");
    /// assert_eq!(leading[1], "ORG#${aws:PrincipalTag/tenant}#*");
    /// assert_eq!(policy["Statement"][1]["Resource"], "arn:aws:dynamodb:*:*:table/saas/index/gsi1");
    /// ```
    pub fn tenant_policy(&self, target: &PolicyTarget) -> Option<Value> {
        let lead = format!("{}${{{}}}", literal(self.tenant?), target.tenant_key);
        let mut leading = vec![Value::from(lead.clone())];
        leading
            .extend(crate::escape::SEPARATORS.iter().map(|s| Value::from(format!("{lead}{s}*"))));
        // The tenant's value holds none of the characters keys escape, nor IAM's wildcards.
        let escaped: Vec<Value> = crate::escape::SEPARATORS
            .iter()
            .map(|s| format!("*{s}*"))
            .chain(["*%*".to_owned(), "*${*}*".to_owned(), "*${?}*".to_owned()])
            .map(Value::from)
            .collect();
        let condition = json!({
            "ForAllValues:StringLike": { "dynamodb:LeadingKeys": leading },
            "Null": { target.tenant_key.as_str(): "false" },
            "StringNotLike": { target.tenant_key.as_str(): escaped },
        });
        let table_arn = target.table_arn();
        let mut statements = vec![json!({
            "Sid": "TenantItems",
            "Effect": "Allow",
            "Action": TABLE_ACTIONS,
            "Resource": table_arn,
            "Condition": condition,
        })];
        for (i, index) in self.indexes.iter().filter(|i| !i.is_multi()).enumerate() {
            statements.push(json!({
                "Sid": format!("TenantIndexQueries{i}"),
                "Effect": "Allow",
                "Action": ["dynamodb:Query"],
                "Resource": format!("{table_arn}/index/{}", index.name),
                "Condition": condition,
            }));
        }
        Some(json!({ "Version": "2012-10-17", "Statement": statements }))
    }

    /// [`tenant_policy`](Self::tenant_policy) as pretty-printed JSON.
    pub fn tenant_policy_json(&self, target: &PolicyTarget) -> Option<String> {
        self.tenant_policy(target).and_then(|p| serde_json::to_string_pretty(&p).ok())
    }
}
