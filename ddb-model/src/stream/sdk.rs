//! Records of the streams API (`GetRecords` of `aws-sdk-dynamodbstreams`) as
//! [`StreamRecord`]s: the same fields, the streams SDK's attribute values converted to the
//! DynamoDB SDK's.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodbstreams::types::{AttributeValue as StreamValue, Record};

use super::{StreamChange, StreamRecord, UserIdentity};
use crate::error::Error;
use crate::item::Item;

/// Reads a record of the streams API. Fails only on an attribute value of a type this SDK
/// version does not know ([`Error::InvalidStreamRecord`]); the event name is checked by
/// [`StreamRecord::decode`], as for a Lambda event.
///
/// ```
/// use ddb_model::aws_sdk_dynamodbstreams::types::{
///     AttributeValue, OperationType, Record, StreamRecord as SdkRecord,
/// };
/// use ddb_model::stream::StreamRecord;
///
/// let record = Record::builder()
///     .event_name(OperationType::Remove)
///     .dynamodb(SdkRecord::builder().keys("pk", AttributeValue::S("USER#ann".into())).build())
///     .build();
/// let record = StreamRecord::try_from(record)?;
/// assert_eq!(record.event_name, "REMOVE");
/// # Ok::<(), ddb_model::Error>(())
/// ```
impl TryFrom<Record> for StreamRecord {
    type Error = Error;

    fn try_from(record: Record) -> Result<StreamRecord, Error> {
        let event_id = record.event_id;
        let item = |map: Option<HashMap<String, StreamValue>>| -> Result<Option<Item>, Error> {
            map.map(|m| convert_map(m, event_id.as_deref())).transpose()
        };
        let change = record
            .dynamodb
            .unwrap_or_else(|| aws_sdk_dynamodbstreams::types::StreamRecord::builder().build());
        let dynamodb = StreamChange {
            keys: item(change.keys)?.unwrap_or_default(),
            new_image: item(change.new_image)?,
            old_image: item(change.old_image)?,
            sequence_number: change.sequence_number,
            size_bytes: change.size_bytes.and_then(|n| u64::try_from(n).ok()),
            stream_view_type: change.stream_view_type.map(|v| v.as_str().to_owned()),
            approximate_creation_date_time: change
                .approximate_creation_date_time
                .map(|t| t.as_secs_f64()),
        };
        Ok(StreamRecord {
            event_name: record.event_name.map(|n| n.as_str().to_owned()).unwrap_or_default(),
            event_id,
            event_source: record.event_source,
            event_source_arn: None,
            aws_region: record.aws_region,
            user_identity: record.user_identity.map(|u| UserIdentity {
                kind: u.r#type.unwrap_or_default(),
                principal_id: u.principal_id.unwrap_or_default(),
            }),
            dynamodb,
        })
    }
}

fn convert_map(map: HashMap<String, StreamValue>, event_id: Option<&str>) -> Result<Item, Error> {
    map.into_iter().map(|(k, v)| Ok((k, convert(v, event_id)?))).collect()
}

fn convert(value: StreamValue, event_id: Option<&str>) -> Result<AttributeValue, Error> {
    Ok(match value {
        StreamValue::S(s) => AttributeValue::S(s),
        StreamValue::N(n) => AttributeValue::N(n),
        StreamValue::B(b) => AttributeValue::B(b),
        StreamValue::Bool(b) => AttributeValue::Bool(b),
        StreamValue::Null(n) => AttributeValue::Null(n),
        StreamValue::Ss(v) => AttributeValue::Ss(v),
        StreamValue::Ns(v) => AttributeValue::Ns(v),
        StreamValue::Bs(v) => AttributeValue::Bs(v),
        StreamValue::L(v) => AttributeValue::L(
            v.into_iter().map(|v| convert(v, event_id)).collect::<Result<_, _>>()?,
        ),
        StreamValue::M(m) => AttributeValue::M(convert_map(m, event_id)?),
        _ => {
            return Err(Error::InvalidStreamRecord {
                event_id: event_id.map(str::to_owned),
                reason: crate::error::StreamRecordReason::UnknownAttributeType,
            });
        }
    })
}
