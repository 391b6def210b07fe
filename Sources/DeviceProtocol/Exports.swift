/// The protocol's messages carry `JSONValue`s: whoever speaks the protocol sees the type through it.
@_exported import JSONValues
