// Command otlpsink is the OpenTelemetry Collector's own OTLP receiver (otlpreceiver, the
// component every collector distribution runs), listening for OTLP/HTTP on -http and writing
// every batch of spans it accepts to stdout, and every batch of metrics to the file -metrics,
// as one line of OTLP/JSON. The telemetry tests (tests/tests/integration/telemetry.rs) point a
// generated server's exporters at it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

func main() {
	endpoint := flag.String("http", "127.0.0.1:4318", "the host:port the OTLP/HTTP receiver listens on")
	metrics := flag.String("metrics", "", "the file metrics are written to (none: metrics are refused)")
	flag.Parse()
	if err := run(*endpoint, *metrics); err != nil {
		fmt.Fprintf(os.Stderr, "otlpsink: %v\n", err)
		os.Exit(1)
	}
}

func run(endpoint string, metricsPath string) error {
	factory := otlpreceiver.NewFactory()
	cfg := factory.CreateDefaultConfig()
	// The receiver's configuration as a collector's YAML would give it: OTLP/HTTP only.
	conf := confmap.NewFromStringMap(map[string]any{
		"protocols": map[string]any{"http": map[string]any{"endpoint": endpoint}},
	})
	if err := conf.Unmarshal(cfg); err != nil {
		return fmt.Errorf("configuring the receiver: %w", err)
	}

	var mu sync.Mutex
	marshaler := &ptrace.JSONMarshaler{}
	sink, err := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		line, err := marshaler.MarshalTraces(td)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := os.Stdout.Write(append(line, '\n')); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}

	ctx := context.Background()
	receiver, err := factory.CreateTraces(ctx, receivertest.NewNopSettings(factory.Type()), cfg, sink)
	if err != nil {
		return fmt.Errorf("creating the receiver: %w", err)
	}
	if metricsPath != "" {
		// The same configuration: the receiver shares its HTTP server between the signals.
		out, err := os.Create(metricsPath)
		if err != nil {
			return err
		}
		defer out.Close()
		metricsMarshaler := &pmetric.JSONMarshaler{}
		metricsSink, err := consumer.NewMetrics(func(_ context.Context, md pmetric.Metrics) error {
			line, err := metricsMarshaler.MarshalMetrics(md)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			_, err = out.Write(append(line, '\n'))
			return err
		})
		if err != nil {
			return err
		}
		metrics, err := factory.CreateMetrics(ctx, receivertest.NewNopSettings(factory.Type()), cfg, metricsSink)
		if err != nil {
			return fmt.Errorf("creating the metrics receiver: %w", err)
		}
		// Both signals exist before the shared HTTP server starts (the first Start), which is
		// when it sets its routes.
		if err := metrics.Start(ctx, componenttest.NewNopHost()); err != nil {
			return fmt.Errorf("starting the metrics receiver: %w", err)
		}
		defer func() { _ = metrics.Shutdown(ctx) }()
	}
	if err := receiver.Start(ctx, componenttest.NewNopHost()); err != nil {
		return fmt.Errorf("starting the receiver on %s: %w", endpoint, err)
	}
	fmt.Fprintf(os.Stderr, "otlpsink: receiving OTLP/HTTP on %s\n", endpoint)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	return receiver.Shutdown(ctx)
}
