import BridgeCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import ServiceLifecycle

/// Serves every metric in the Prometheus text format on `http://<listen>/metrics` (`metrics.prometheus.listen`),
/// until graceful shutdown. The MQTT and D-Bus statistics are recorded every few seconds while it runs, so a
/// scrape sees them no staler than that.
struct PrometheusEndpoint: Service, CustomStringConvertible {
    /// The name ServiceLifecycle logs it by (without one it would describe every stored property by reflection).
    var description: String { "Prometheus endpoint" }

    let address: ListenAddress
    let registry: PrometheusCollectorRegistry
    let statistics: ClientStatisticsRecorder
    let logger: Logger
    static let statisticsInterval: Duration = .seconds(2)

    func run() async throws {
        let registry = self.registry
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMap {
                    channel.pipeline.addHandler(MetricsHTTPHandler(registry: registry))
                }
            }
            .bind(host: address.host, port: address.port)
            .get()
        logger.notice("prometheus.listening", metadata: ["listen": "\(address)"])
        await statistics.record()
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: Self.statisticsInterval)
                        await statistics.record()
                    }
                }
                try? await channel.closeFuture.get()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
    }
}

/// One HTTP/1.1 request at a time per connection: `GET /metrics` renders the registry, anything else is 404 (or
/// 405 for another method on `/metrics`). Request bodies are ignored, never buffered.
final class MetricsHTTPHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let registry: PrometheusCollectorRegistry

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let request) = unwrapInboundIn(data) else { return }
        let path = request.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.uri
        var body: [UInt8] = []
        let status: HTTPResponseStatus
        if path != "/metrics" {
            status = .notFound
            body = Array("not found; metrics are at /metrics\n".utf8)
        } else if request.method != .GET && request.method != .HEAD {
            status = .methodNotAllowed
        } else {
            status = .ok
            registry.emit(into: &body)
        }
        var headers = HTTPHeaders()
        headers.add(
            name: "Content-Type", value: status == .ok ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain")
        headers.add(name: "Content-Length", value: "\(body.count)")
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        var head = HTTPResponseHead(version: request.version, status: status, headers: headers)
        head.headers.replaceOrAdd(name: "Cache-Control", value: "no-store")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if request.method != .HEAD {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }
}
