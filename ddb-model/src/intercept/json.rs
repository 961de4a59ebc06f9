//! [`Request`] as DynamoDB JSON: the body of the service's API, with the attribute values of
//! `item/json.rs` (the writer stream records share). Fields the request leaves unset are left
//! out; maps are written with their names sorted, so a request always prints the same text.
//! The legacy parameters the library never sets (`Expected`, `KeyConditions`,
//! `AttributeUpdates`, `QueryFilter`, `ScanFilter`, `AttributesToGet`) are not written.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, ConditionCheck, Delete, Get, KeySchemaElement,
    KeysAndAttributes, Projection, Put, TransactGetItem, TransactWriteItem, Update, WriteRequest,
};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::Request;
use crate::item::Item;
use crate::item::json::{ItemRef, ValueRef};

/// A JSON object of the entries whose value is `Some`.
macro_rules! object {
    ($s:expr; $($key:literal => $v:expr),* $(,)?) => {{
        let mut map = $s.serialize_map(None)?;
        $(if let Some(v) = $v {
            map.serialize_entry($key, &v)?;
        })*
        map.end()
    }};
}

fn item(i: &Item) -> Option<ItemRef<'_>> {
    Some(ItemRef(i))
}
fn opt_item(i: &Option<Item>) -> Option<ItemRef<'_>> {
    i.as_ref().map(ItemRef)
}
fn names(n: &Option<HashMap<String, String>>) -> Option<BTreeMap<&String, &String>> {
    n.as_ref().map(|n| n.iter().collect())
}
fn text(s: &str) -> Option<&str> {
    Some(s)
}
fn opt(s: &Option<String>) -> Option<&str> {
    s.as_deref()
}
fn items(v: &[Item]) -> Option<Vec<ItemRef<'_>>> {
    Some(v.iter().map(ItemRef).collect())
}
fn values(v: &Option<Vec<AttributeValue>>) -> Option<Vec<ValueRef<'_>>> {
    v.as_ref().map(|v| v.iter().map(ValueRef).collect())
}

/// `.as_str()` of an optional SDK enum.
macro_rules! name {
    ($e:expr) => {
        $e.as_ref().map(|e| e.as_str())
    };
}

/// A wrapper that writes an SDK type as DynamoDB JSON.
struct W<'a, T>(&'a T);

impl Serialize for W<'_, Put> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        object!(s;
            "TableName" => text(&p.table_name),
            "Item" => item(&p.item),
            "ConditionExpression" => opt(&p.condition_expression),
            "ExpressionAttributeNames" => names(&p.expression_attribute_names),
            "ExpressionAttributeValues" => opt_item(&p.expression_attribute_values),
            "ReturnValuesOnConditionCheckFailure" => name!(p.return_values_on_condition_check_failure),
        )
    }
}

impl Serialize for W<'_, Update> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let u = self.0;
        object!(s;
            "TableName" => text(&u.table_name),
            "Key" => item(&u.key),
            "UpdateExpression" => text(&u.update_expression),
            "ConditionExpression" => opt(&u.condition_expression),
            "ExpressionAttributeNames" => names(&u.expression_attribute_names),
            "ExpressionAttributeValues" => opt_item(&u.expression_attribute_values),
            "ReturnValuesOnConditionCheckFailure" => name!(u.return_values_on_condition_check_failure),
        )
    }
}

impl Serialize for W<'_, Delete> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        object!(s;
            "TableName" => text(&d.table_name),
            "Key" => item(&d.key),
            "ConditionExpression" => opt(&d.condition_expression),
            "ExpressionAttributeNames" => names(&d.expression_attribute_names),
            "ExpressionAttributeValues" => opt_item(&d.expression_attribute_values),
            "ReturnValuesOnConditionCheckFailure" => name!(d.return_values_on_condition_check_failure),
        )
    }
}

impl Serialize for W<'_, ConditionCheck> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.0;
        object!(s;
            "TableName" => text(&c.table_name),
            "Key" => item(&c.key),
            "ConditionExpression" => text(&c.condition_expression),
            "ExpressionAttributeNames" => names(&c.expression_attribute_names),
            "ExpressionAttributeValues" => opt_item(&c.expression_attribute_values),
            "ReturnValuesOnConditionCheckFailure" => name!(c.return_values_on_condition_check_failure),
        )
    }
}

impl Serialize for W<'_, TransactWriteItem> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.0;
        object!(s;
            "Put" => a.put.as_ref().map(W),
            "Update" => a.update.as_ref().map(W),
            "Delete" => a.delete.as_ref().map(W),
            "ConditionCheck" => a.condition_check.as_ref().map(W),
        )
    }
}

impl Serialize for W<'_, Get> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let g = self.0;
        object!(s;
            "TableName" => text(&g.table_name),
            "Key" => item(&g.key),
            "ProjectionExpression" => opt(&g.projection_expression),
            "ExpressionAttributeNames" => names(&g.expression_attribute_names),
        )
    }
}

impl Serialize for W<'_, TransactGetItem> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        object!(s; "Get" => self.0.get.as_ref().map(W))
    }
}

impl Serialize for W<'_, KeysAndAttributes> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let k = self.0;
        object!(s;
            "Keys" => items(&k.keys),
            "ConsistentRead" => k.consistent_read,
            "ProjectionExpression" => opt(&k.projection_expression),
            "ExpressionAttributeNames" => names(&k.expression_attribute_names),
        )
    }
}

impl Serialize for W<'_, WriteRequest> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let w = self.0;
        let put = w.put_request.as_ref().map(|p| Single("Item", ItemRef(&p.item)));
        let delete = w.delete_request.as_ref().map(|d| Single("Key", ItemRef(&d.key)));
        object!(s; "PutRequest" => put, "DeleteRequest" => delete)
    }
}

/// `{name: value}`.
struct Single<V>(&'static str, V);

impl<V: Serialize> Serialize for Single<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(self.0, &self.1)?;
        map.end()
    }
}

impl Serialize for W<'_, KeySchemaElement> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        object!(s;
            "AttributeName" => text(&self.0.attribute_name),
            "KeyType" => Some(self.0.key_type.as_str()),
        )
    }
}

impl Serialize for W<'_, AttributeDefinition> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        object!(s;
            "AttributeName" => text(&self.0.attribute_name),
            "AttributeType" => Some(self.0.attribute_type.as_str()),
        )
    }
}

impl Serialize for W<'_, Projection> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        object!(s;
            "ProjectionType" => name!(self.0.projection_type),
            "NonKeyAttributes" => self.0.non_key_attributes.as_ref(),
        )
    }
}

/// An index of a `CreateTable`: its name, key schema and projection.
struct Index<'a>(&'a str, &'a [KeySchemaElement], Option<&'a Projection>);

impl Serialize for Index<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        object!(s;
            "IndexName" => text(self.0),
            "KeySchema" => list(self.1),
            "Projection" => self.2.map(W),
        )
    }
}

/// A list of SDK values, each written by `W`.
fn list<T>(v: &[T]) -> Option<Vec<W<'_, T>>> {
    Some(v.iter().map(W).collect())
}

/// An optional list of SDK values, each written by `W`.
fn opt_list<T>(v: &Option<Vec<T>>) -> Option<Vec<W<'_, T>>> {
    v.as_deref().and_then(list)
}

impl Serialize for Request {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Request::GetItem(r) => object!(s;
                "TableName" => opt(&r.table_name),
                "Key" => opt_item(&r.key),
                "ConsistentRead" => r.consistent_read,
                "ProjectionExpression" => opt(&r.projection_expression),
                "ExpressionAttributeNames" => names(&r.expression_attribute_names),
                "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
            ),
            Request::PutItem(r) => object!(s;
                "TableName" => opt(&r.table_name),
                "Item" => opt_item(&r.item),
                "ConditionExpression" => opt(&r.condition_expression),
                "ExpressionAttributeNames" => names(&r.expression_attribute_names),
                "ExpressionAttributeValues" => opt_item(&r.expression_attribute_values),
                "ReturnValues" => name!(r.return_values),
                "ReturnValuesOnConditionCheckFailure" => name!(r.return_values_on_condition_check_failure),
                "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
            ),
            Request::UpdateItem(r) => object!(s;
                "TableName" => opt(&r.table_name),
                "Key" => opt_item(&r.key),
                "UpdateExpression" => opt(&r.update_expression),
                "ConditionExpression" => opt(&r.condition_expression),
                "ExpressionAttributeNames" => names(&r.expression_attribute_names),
                "ExpressionAttributeValues" => opt_item(&r.expression_attribute_values),
                "ReturnValues" => name!(r.return_values),
                "ReturnValuesOnConditionCheckFailure" => name!(r.return_values_on_condition_check_failure),
                "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
            ),
            Request::DeleteItem(r) => object!(s;
                "TableName" => opt(&r.table_name),
                "Key" => opt_item(&r.key),
                "ConditionExpression" => opt(&r.condition_expression),
                "ExpressionAttributeNames" => names(&r.expression_attribute_names),
                "ExpressionAttributeValues" => opt_item(&r.expression_attribute_values),
                "ReturnValues" => name!(r.return_values),
                "ReturnValuesOnConditionCheckFailure" => name!(r.return_values_on_condition_check_failure),
                "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
            ),
            Request::Query(r) => object!(s;
                "TableName" => opt(&r.table_name),
                "IndexName" => opt(&r.index_name),
                "KeyConditionExpression" => opt(&r.key_condition_expression),
                "FilterExpression" => opt(&r.filter_expression),
                "ProjectionExpression" => opt(&r.projection_expression),
                "ExpressionAttributeNames" => names(&r.expression_attribute_names),
                "ExpressionAttributeValues" => opt_item(&r.expression_attribute_values),
                "ExclusiveStartKey" => opt_item(&r.exclusive_start_key),
                "ScanIndexForward" => r.scan_index_forward,
                "Limit" => r.limit,
                "Select" => name!(r.select),
                "ConsistentRead" => r.consistent_read,
                "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
            ),
            Request::Scan(r) => object!(s;
                "TableName" => opt(&r.table_name),
                "IndexName" => opt(&r.index_name),
                "FilterExpression" => opt(&r.filter_expression),
                "ProjectionExpression" => opt(&r.projection_expression),
                "ExpressionAttributeNames" => names(&r.expression_attribute_names),
                "ExpressionAttributeValues" => opt_item(&r.expression_attribute_values),
                "ExclusiveStartKey" => opt_item(&r.exclusive_start_key),
                "Segment" => r.segment,
                "TotalSegments" => r.total_segments,
                "Limit" => r.limit,
                "Select" => name!(r.select),
                "ConsistentRead" => r.consistent_read,
                "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
            ),
            Request::BatchGetItem(r) => {
                let tables = r
                    .request_items
                    .as_ref()
                    .map(|t| t.iter().map(|(k, v)| (k, W(v))).collect::<BTreeMap<_, _>>());
                object!(s;
                    "RequestItems" => tables,
                    "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
                )
            }
            Request::BatchWriteItem(r) => {
                let tables = r
                    .request_items
                    .as_ref()
                    .map(|t| t.iter().map(|(k, v)| (k, list(v))).collect::<BTreeMap<_, _>>());
                object!(s;
                    "RequestItems" => tables,
                    "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
                    "ReturnItemCollectionMetrics" => name!(r.return_item_collection_metrics),
                )
            }
            Request::TransactGetItems(r) => object!(s;
                "TransactItems" => opt_list(&r.transact_items),
                "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
            ),
            Request::TransactWriteItems(r) => object!(s;
                "TransactItems" => opt_list(&r.transact_items),
                "ClientRequestToken" => opt(&r.client_request_token),
                "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
                "ReturnItemCollectionMetrics" => name!(r.return_item_collection_metrics),
            ),
            Request::CreateTable(r) => {
                let gsis = r.global_secondary_indexes.as_ref().map(|v| {
                    v.iter()
                        .map(|i| Index(&i.index_name, &i.key_schema, i.projection.as_ref()))
                        .collect::<Vec<_>>()
                });
                let lsis = r.local_secondary_indexes.as_ref().map(|v| {
                    v.iter()
                        .map(|i| Index(&i.index_name, &i.key_schema, i.projection.as_ref()))
                        .collect::<Vec<_>>()
                });
                object!(s;
                    "TableName" => opt(&r.table_name),
                    "AttributeDefinitions" => opt_list(&r.attribute_definitions),
                    "KeySchema" => opt_list(&r.key_schema),
                    "BillingMode" => name!(r.billing_mode),
                    "GlobalSecondaryIndexes" => gsis,
                    "LocalSecondaryIndexes" => lsis,
                )
            }
            Request::DescribeTable(r) => object!(s; "TableName" => opt(&r.table_name)),
            Request::DeleteTable(r) => object!(s; "TableName" => opt(&r.table_name)),
            Request::DescribeTimeToLive(r) => object!(s; "TableName" => opt(&r.table_name)),
            Request::UpdateTimeToLive(r) => {
                let spec = r.time_to_live_specification.as_ref();
                object!(s;
                    "TableName" => opt(&r.table_name),
                    "TimeToLiveSpecification" => spec.map(|t| Ttl(t.enabled, &t.attribute_name)),
                )
            }
            Request::UpdateTable(r) => {
                let updates = r.global_secondary_index_updates.as_ref().map(|v| {
                    v.iter().map(|u| match (&u.create, &u.delete) {
                        (Some(c), _) => serde_json::json!({
                            "Create": serde_json::to_value(Index(&c.index_name, &c.key_schema, c.projection.as_ref())).unwrap_or_default()
                        }),
                        (_, Some(d)) => serde_json::json!({ "Delete": { "IndexName": d.index_name } }),
                        _ => serde_json::json!({}),
                    }).collect::<Vec<_>>()
                });
                let stream = r.stream_specification.as_ref().map(|s| {
                    let view = s.stream_view_type.as_ref().map(|v| v.as_str());
                    serde_json::json!({ "StreamEnabled": s.stream_enabled, "StreamViewType": view })
                });
                object!(s;
                    "TableName" => opt(&r.table_name),
                    "AttributeDefinitions" => opt_list(&r.attribute_definitions),
                    "GlobalSecondaryIndexUpdates" => updates,
                    "StreamSpecification" => stream,
                    "DeletionProtectionEnabled" => r.deletion_protection_enabled,
                )
            }
            Request::DescribeContinuousBackups(r) => {
                object!(s; "TableName" => opt(&r.table_name))
            }
            Request::UpdateContinuousBackups(r) => object!(s;
                "TableName" => opt(&r.table_name),
                "PointInTimeRecoveryEnabled" => r
                    .point_in_time_recovery_specification
                    .as_ref()
                    .map(|p| p.point_in_time_recovery_enabled),
            ),
            Request::ListTagsOfResource(r) => object!(s;
                "ResourceArn" => opt(&r.resource_arn),
                "NextToken" => opt(&r.next_token),
            ),
            Request::TagResource(r) => object!(s;
                "ResourceArn" => opt(&r.resource_arn),
                "Tags" => r.tags.as_ref().map(|t| {
                    let tag = |t: &aws_sdk_dynamodb::types::Tag| serde_json::json!({ "Key": t.key, "Value": t.value });
                    t.iter().map(tag).collect::<Vec<_>>()
                }),
            ),
            Request::UntagResource(r) => object!(s;
                "ResourceArn" => opt(&r.resource_arn),
                "TagKeys" => r.tag_keys.as_ref(),
            ),
            Request::GetResourcePolicy(r) => object!(s; "ResourceArn" => opt(&r.resource_arn)),
            Request::PutResourcePolicy(r) => object!(s;
                "ResourceArn" => opt(&r.resource_arn),
                "Policy" => opt(&r.policy),
            ),
            Request::DeleteResourcePolicy(r) => object!(s; "ResourceArn" => opt(&r.resource_arn)),
            Request::SearchVectors(r) => object!(s;
                "TableName" => opt(&r.table_name),
                "IndexName" => opt(&r.index_name),
                "SearchVector" => values(&r.search_vector),
                "TopK" => r.top_k,
                "SearchConditionExpression" => opt(&r.search_condition_expression),
                "ProjectionExpression" => opt(&r.projection_expression),
                "ExpressionAttributeNames" => names(&r.expression_attribute_names),
                "ExpressionAttributeValues" => opt_item(&r.expression_attribute_values),
                "ReturnConsumedCapacity" => name!(r.return_consumed_capacity),
            ),
        }
    }
}

/// A `TimeToLiveSpecification`.
struct Ttl<'a>(bool, &'a str);

impl Serialize for Ttl<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        object!(s; "Enabled" => Some(self.0), "AttributeName" => text(self.1))
    }
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::operation::put_item::PutItemInput;

    use super::*;

    #[test]
    fn a_put_prints_as_the_service_body() {
        let input = PutItemInput::builder()
            .table_name("app")
            .item("PK", AttributeValue::S("USER#ann".into()))
            .item("n", AttributeValue::N("1".into()))
            .condition_expression("attribute_not_exists(#n0)")
            .expression_attribute_names("#n0", "PK")
            .build()
            .expect("a table name");
        let json = Request::PutItem(input).to_json();
        assert_eq!(
            json,
            r##"{"TableName":"app","Item":{"PK":{"S":"USER#ann"},"n":{"N":"1"}},"ConditionExpression":"attribute_not_exists(#n0)","ExpressionAttributeNames":{"#n0":"PK"}}"##
        );
    }
}
