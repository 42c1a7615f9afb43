import Foundation
import Testing
@testable import PortalAuthCore

/// The file store (docs/desktop.md "File store") on its own: names that stay in their folder
/// whatever the environment id, entries that are not the user's refused, bytes that are not
/// UTF-8 read as undecodable. (The C and Python tests run it through the client, with no
/// session bus.)
@Suite struct FileStorageTests {
    /// A fresh folder under a fresh temporary one, not made yet: the store makes it.
    func folder() throws -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("portal-auth-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: false)
        return base.path + "/store"
    }

    @Test(arguments: ["../escape", "a/b", ".hidden", "env@other", "é"])
    func anEnvironmentIdNeverLeavesTheFolder(_ environmentId: String) async throws {
        let directory = try folder()
        let store = try FileSessionStorage(applicationId: "io.portalhq.auth.Tests", directory: directory)
        try await store.set("value", environmentId: environmentId)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }
        #expect(names.count == 1)
        #expect(names.allSatisfy { !$0.contains("/") && $0.hasPrefix("io.portalhq.auth.Tests@") && $0.hasSuffix(".json") })
        #expect(try await store.get(environmentId: environmentId) == "value")
        // Another environment is another file.
        #expect(try await store.get(environmentId: environmentId + "x") == nil)
    }

    @Test func anEntryThatIsASymlinkIsRefused() async throws {
        let directory = try folder()
        let store = try FileSessionStorage(applicationId: "io.portalhq.auth.Tests", directory: directory)
        try await store.set("mine", environmentId: "env")
        let entry = directory + "/io.portalhq.auth.Tests@env.json"
        try FileManager.default.removeItem(atPath: entry)
        try FileManager.default.createSymbolicLink(atPath: entry, withDestinationPath: "/etc/hostname")
        await #expect {
            _ = try await store.get(environmentId: "env")
        } throws: { error in
            (error as? SessionStorageError)?.reason == .fileStoreUnsafe
        }
    }

    @Test func bytesThatAreNotUTF8ReadAsUndecodable() async throws {
        let directory = try folder()
        let store = try FileSessionStorage(applicationId: nil, directory: directory)
        try await store.set("x", environmentId: "env")
        try Data([0x7B, 0xFF, 0x7D]).write(to: URL(fileURLWithPath: directory + "/shared@env.json"))
        #expect(try await store.get(environmentId: "env") == "")
    }

    /// A parent folder others may write to: refused, with a message that names it and says
    /// what to do, before anything is made in it.
    @Test func aParentOthersMayWriteToIsRefused() async throws {
        let directory = try folder()
        let parent = (directory as NSString).deletingLastPathComponent
        #expect(chmod(parent, 0o777) == 0)
        let store = try FileSessionStorage(applicationId: nil, directory: directory)
        await #expect {
            try await store.checkCanStore(environmentId: "env")
        } throws: { error in
            guard let failure = error as? SessionStorageError else { return false }
            return failure.reason == .fileStoreUnsafe && failure.message.contains("others may write to \(parent), and it is not sticky")
        }
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    /// `..` in the path is the parent of the folder walked; a loop of symlinks among the
    /// parents ends the walk (refused) rather than hanging it.
    @Test func dotDotIsWalkedAndALinkLoopIsRefused() async throws {
        let base = (try folder() as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: base + "/inner", withIntermediateDirectories: false)
        let store = try FileSessionStorage(applicationId: nil, directory: base + "/inner/../store")
        try await store.set("value", environmentId: "env")
        #expect(FileManager.default.fileExists(atPath: base + "/store/shared@env.json"))
        try FileManager.default.createSymbolicLink(atPath: base + "/loop", withDestinationPath: "loop")
        let looped = try FileSessionStorage(applicationId: nil, directory: base + "/loop/store")
        await #expect {
            _ = try await looped.get(environmentId: "env")
        } throws: { error in
            (error as? SessionStorageError)?.reason == .fileStoreUnsafe
        }
    }

    @Test(arguments: ["", "relative/folder", "/with\u{0}nul"])
    func aFolderMustBeAnAbsolutePath(_ directory: String) {
        #expect(throws: PortalAuthError.invalidArgument(name: "directory")) {
            _ = try FileSessionStorage(directory: directory)
        }
    }
}
