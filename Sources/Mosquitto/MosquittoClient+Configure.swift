import CMosquitto
import MQTTCore

extension MosquittoClient {
    /// Applies `options` to a fresh handle: protocol, socket options, credentials, TLS and the Last Will.
    static func configure(_ handle: OpaquePointer, _ options: Options) throws(MQTTError) {
        func set(_ option: mosq_opt_t, _ value: Int, _ what: String) throws(MQTTError) {
            try MosquittoResult.check(
                mosquitto_int_option(handle, option, Int32(clamping: value)), operation: "setting \(what)")
        }
        try set(
            MOSQ_OPT_PROTOCOL_VERSION, Int(options.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311),
            "the protocol version")
        // A unix socket has no Nagle's algorithm to turn off.
        try set(MOSQ_OPT_TCP_NODELAY, options.tcpNoDelay && !options.broker.usesUnixSocket ? 1 : 0, "TCP_NODELAY")
        try set(MOSQ_OPT_RECEIVE_MAXIMUM, min(max(options.receiveMaximum, 1), 65_535), "the receive maximum")
        // libmosquitto queues without limit beyond its inflight window; our own bound is maxOutstandingPublishes.
        try set(MOSQ_OPT_SEND_MAXIMUM, min(max(options.maxOutstandingPublishes, 1), 65_535), "the send maximum")
        if options.username != nil || options.password != nil {
            try MosquittoResult.check(
                mosquitto_username_pw_set(handle, options.username, options.password),
                operation: "setting the username and password")
        }
        if options.tls != nil || options.broker.usesTLS { try configureTLS(handle, options.tls ?? TLS()) }
        if let will = options.will { try configureWill(handle, will, options.protocolVersion) }
        // On a plain link the client writes plain QoS 0 packets itself (`DirectPublishes`); libmosquitto must then
        // write only when asked, never between two of those bytes. Threaded mode does that and nothing else here:
        // libmosquitto runs no thread of its own unless `mosquitto_loop_start` is called.
        if options.tls == nil && !options.broker.usesTLS {
            try MosquittoResult.check(mosquitto_threaded_set(handle, true), operation: "setting threaded mode")
        }
    }

    private static func configureTLS(_ handle: OpaquePointer, _ tls: TLS) throws(MQTTError) {
        if (tls.certFile == nil) != (tls.keyFile == nil) {
            throw .tlsSetupFailed(reason: "a client certificate needs both certFile and keyFile")
        }
        if let caFile = tls.caFile {
            let rc = mosquitto_tls_set(handle, caFile, nil, tls.certFile, tls.keyFile, nil)
            if rc != MosquittoResult.success {
                throw .tlsSetupFailed(
                    reason:
                        "cannot use CA \(caFile), certificate \(tls.certFile ?? "none"), key \(tls.keyFile ?? "none"): \(MosquittoResult.text(rc)) (check that the files exist and are readable)"
                )
            }
        } else {
            if tls.certFile != nil { throw .tlsSetupFailed(reason: "a client certificate needs caFile too") }
            let rc = mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
            if rc != MosquittoResult.success {
                throw .tlsSetupFailed(reason: "cannot use the system CAs: \(MosquittoResult.text(rc))")
            }
        }
        if tls.insecure {
            let rc = mosquitto_tls_insecure_set(handle, true)
            if rc != MosquittoResult.success {
                throw .tlsSetupFailed(reason: "cannot disable host-name checks: \(MosquittoResult.text(rc))")
            }
        }
    }

    private static func configureWill(_ handle: OpaquePointer, _ will: MQTTMessage, _ version: MQTTProtocolVersion)
        throws(MQTTError)
    {
        try MQTTTopic.validate(will.topic)
        var properties = version == .v5 ? try MosquittoPropertyList.make(will.properties) : nil
        let rc = will.payload.withUnsafeBytes {
            mosquitto_will_set_v5(
                handle, will.topic, Int32(clamping: $0.count), $0.baseAddress,
                Int32(will.qos.rawValue), will.retain, properties)
        }
        // The list becomes libmosquitto's only when the call succeeds.
        if rc != MosquittoResult.success {
            mosquitto_property_free_all(&properties)
            throw MosquittoResult.error(rc, operation: "setting the Last Will on \(will.topic)")
        }
    }
}
