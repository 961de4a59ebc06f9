// An interceptor is shown the request read-only: it cannot change a key, an item or the
// library's bookkeeping (it may only add a condition, through `Additions`).
use ddb_model::intercept::{Additions, Interceptor, Request};

struct Meddler;

impl Interceptor for Meddler {
    fn before(&self, request: &Request, _: &mut Additions) {
        if let Request::PutItem(put) = request {
            put.item = None;
        }
    }
}

fn main() {}
