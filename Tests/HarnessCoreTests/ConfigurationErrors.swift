import HarnessCore
import Testing

/// The error reading `text` as harness.yml gives; nil, when it reads, and an issue, when the error is of
/// another kind.
func configurationError(_ text: String) -> ConfigurationError? {
    do {
        _ = try ConfigurationLoader.parse(text, file: "harness.yml")
        return nil
    } catch let error as ConfigurationError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}
