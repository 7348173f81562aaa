import BluetoothCore
import BridgeCore
import Testing

/// Documents written with keys and members made once read exactly as those written key by key, and a payload
/// written again in place keeps its room.
@Suite struct JSONFragmentsTests {
    @Test func keysAreEscapedAsKeyTextEscapesThem() {
        let fragments = JSONFragments.keys(["temperature", "a\"b\\c\n", "°C"])
        #expect(fragments.count == 3)
        #expect(fragments.text(at: 0) == #""temperature":"#)
        #expect(fragments.text(at: 1) == #""a\"b\\c\n":"#)
        #expect(fragments.text(at: 2) == "\"°C\":")
    }

    @Test func aDocumentFromFragmentsReadsAsOneWrittenKeyByKey() {
        var fragments = JSONFragments.keys(["x", "y"])
        fragments.append(member: { $0.field("format", "bthome") })
        var fromFragments = JSONWriter()
        fromFragments.beginObject()
        fromFragments.key(fragments, at: 0)
        fromFragments.value(1)
        fromFragments.key(fragments, at: 1)
        fromFragments.beginArray()
        fromFragments.value(true)
        fromFragments.endArray()
        fromFragments.member(fragments, at: 2)
        fromFragments.endObject()
        #expect(fromFragments.string == #"{"x":1,"y":[true],"format":"bthome"}"#)
    }

    @Test func aPayloadWrittenAgainKeepsItsRoom() {
        var payload: [UInt8] = []
        JSONWriter.document(into: &payload) { $0.value("a longer first document") }
        #expect(String(decoding: payload, as: UTF8.self) == #""a longer first document""#)
        let room = payload.withUnsafeBufferPointer { $0.baseAddress }
        JSONWriter.document(into: &payload) { $0.value(42) }
        #expect(payload == Array("42".utf8))
        #expect(payload.withUnsafeBufferPointer { $0.baseAddress } == room)
        // A payload someone else still holds is left as it was.
        let published = payload
        JSONWriter.document(into: &payload) { $0.value(7) }
        #expect(published == Array("42".utf8))
        #expect(payload == Array("7".utf8))
    }

    @Test func aStateWrittenWithALayoutReadsAsItsDocument() throws {
        func reading(_ format: AdvertisementFormat, _ values: KeyValuePairs<String, MeasurementValue>)
            -> DecodedAdvertisement
        {
            DecodedAdvertisement(
                format: format, measurements: values.map { DecodedMeasurement(name: $0.key, value: $0.value) })
        }
        let readings = [
            reading(.bthome, ["temperature": .number(21.5), "battery": .number(93)]),
            reading(.bthome, ["temperature": .number(-3.25), "battery": .number(92)]),
            // Other names, order, count or format: the layout does not fit, and the names are written as they are.
            reading(.bthome, ["battery": .number(92), "temperature": .number(20)]),
            reading(.pvvx, ["temperature": .number(21.5), "battery": .number(93)]),
            reading(.bthome, ["temperature": .number(1)]),
            reading(.bthome, ["te\"mp": .text("a\nb"), "open": .bool(true)]),
            reading(.eddystone, [:]),
        ]
        for made in readings {
            let layout = StateDocumentLayout(of: made)
            var payload: [UInt8] = []
            for written in readings {
                written.writeState(into: &payload, layout: layout)
                #expect(payload == written.stateJSON, "layout of \(made), state of \(written)")
                #expect(
                    layout.fits(written)
                        == (written.format == made.format
                            && written.measurements.map(\.name) == made.measurements.map(\.name)))
            }
        }
        #expect(
            String(decoding: readings[1].stateJSON, as: UTF8.self)
                == #"{"temperature":-3.25,"battery":92,"format":"bthome"}"#)
    }

    @Test func anAdvertWrittenWithALayoutReadsAsItsDocument() throws {
        let address = try BluetoothAddress(parsing: "A4:C1:38:00:00:01")
        let other = try BluetoothAddress(parsing: "A4:C1:38:00:00:02")
        var state = BLEDeviceState(
            path: "/org/bluez/hci0/dev_A4_C1_38_00_00_01",
            properties: [
                .address(address), .rssi(-60), .name("ATC_1"),
                .serviceData(["0000181a-0000-1000-8000-00805f9b34fb": [1, 2]]),
            ])
        var payload: [UInt8] = []
        AdvertPayload.write(of: state, layout: AdvertDocumentLayout(address: address), into: &payload)
        #expect(payload == AdvertPayload.json(of: state))
        #expect(String(decoding: payload, as: UTF8.self).hasPrefix(#"{"address":"A4:C1:38:00:00:01","rssi":-60,"#))
        // Another address than the layout's is written as it is.
        state.address = other
        AdvertPayload.write(of: state, layout: AdvertDocumentLayout(address: address), into: &payload)
        #expect(payload == AdvertPayload.json(of: state))
        #expect(String(decoding: payload, as: UTF8.self).hasPrefix(#"{"address":"A4:C1:38:00:00:02","#))
    }
}
