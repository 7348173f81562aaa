/// Builds introspection XML from interface declarations.
enum DBusIntrospection {
    static func document(
        interfaces: [DBusInterface], isObject: Bool, isObjectManager: Bool, children: [String]
    ) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>
             <interface name="org.freedesktop.DBus.Introspectable">
              <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
             </interface>

            """
        if isObject {
            xml += """
                 <interface name="org.freedesktop.DBus.Properties">
                  <method name="Get"><arg name="interface_name" type="s" direction="in"/><arg name="property_name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
                  <method name="GetAll"><arg name="interface_name" type="s" direction="in"/><arg name="props" type="a{sv}" direction="out"/></method>
                  <method name="Set"><arg name="interface_name" type="s" direction="in"/><arg name="property_name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
                  <signal name="PropertiesChanged"><arg name="interface_name" type="s"/><arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>
                 </interface>

                """
        }
        if isObjectManager {
            xml += """
                 <interface name="org.freedesktop.DBus.ObjectManager">
                  <method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>
                  <signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>
                  <signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>
                 </interface>

                """
        }
        for interface in interfaces {
            xml += " <interface name=\"\(escape(interface.name))\">\n"
            for method in interface.methods {
                xml += "  <method name=\"\(escape(method.name))\">"
                for argument in method.inputs { xml += arg(argument, direction: "in") }
                for argument in method.outputs { xml += arg(argument, direction: "out") }
                xml += "</method>\n"
            }
            for property in interface.properties {
                xml += "  <property name=\"\(escape(property.name))\" type=\"\(escape(property.signature))\""
                xml += " access=\"\(property.access.rawValue)\"/>\n"
            }
            for signal in interface.signals {
                xml += "  <signal name=\"\(escape(signal.name))\">"
                for argument in signal.arguments { xml += arg(argument, direction: nil) }
                xml += "</signal>\n"
            }
            xml += " </interface>\n"
        }
        for child in children { xml += " <node name=\"\(escape(child))\"/>\n" }
        xml += "</node>\n"
        return xml
    }

    private static func arg(_ argument: DBusArgument, direction: String?) -> String {
        var text = "<arg name=\"\(escape(argument.name))\" type=\"\(escape(argument.signature))\""
        if let direction { text += " direction=\"\(direction)\"" }
        return text + "/>"
    }

    private static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }
}
