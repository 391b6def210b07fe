/// Apps under test see the protocol's value types (`JSONValue`, `ContainerPaths`) through DeviceClient.
@_exported import DeviceProtocol
