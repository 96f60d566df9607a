/// One step of a location inside a plist: a dictionary key or an array position.
package enum PlistPathStep: Hashable, Sendable {
    case key(String)
    case index(Int)
}
