// SPDX-License-Identifier: MIT
//
// ccsim-dumbbell: the dumbbell of ccsim's ns-3 cross-check (docs/validation.md), written against
// ns-3's public API (tested with ns-3.48). It is ccsim's code, not ns-3's: it only builds a
// scenario out of ns-3's classes and sets their documented attributes.
//
//   s0 ─┐                                          ┌─ d0
//   s1 ─┼─ r1 ══ bottleneck (rate, delay, queue) ══ r2 ─┼─ d1     flow i: s_i -> d_i, bulk,
//   ... │   access links: --accessRate, --accessDelayMs │  ...    starting at i * --startGapMs
//   sN ─┘                                          └─ dN
//
// Every knob that ccsim also has is an option here, and the driver (driver.py beside this file)
// passes the same values to both simulators. Which ns-3 attribute stands for which ccsim key is
// listed in docs/validation.md; each Config::SetDefault below says why it is set.
//
// Output (stdout), one line per record, space-separated key=value pairs so that the driver can
// parse it without knowing the order:
//   ccsim-dumbbell program=1 flows=... (the options as understood)
//   flow id=I start_s=... bytes_delivered=... goodput_bps=... retransmits=... timeouts=...
//        fast_recoveries=... cwr_entries=... mean_cwnd_bytes=... mean_cwnd_inflated_bytes=...
//        cwnd_samples=... window_violations=...
//   run sim_s=... wall_s=... data_dropped_by_loss=... [red_marked=... red_dropped=...]
//       [qdisc_dropped=... qdisc_marked=... sojourn_packets=... sojourn_p01_s=... sojourn_p05_s=...
//        sojourn_p50_s=... sojourn_p95_s=... sojourn_p99_s=... sojourn_max_s=...]
// (the bracketed parts with --queueType red, codel, fqcodel or pie: what r1's bottleneck qdisc
// dropped and marked, and its packets' sojourn times, measured as ccsim's links table does).
// With --cwndTrace=PATH it also writes PATH as CSV: time_s,flow,cwnd_bytes,cwnd_inflated_bytes,
// one row per flow and sample.
//
// This file is built inside an ns-3 tree of one's own (e.g. as a program under its scratch/
// folder); the repository holds no build recipe for ns-3.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace ns3;

namespace
{

// Loss of data segments only. ns-3's RateErrorModel would drop any packet, the SYN and the
// handshake's ACK included; ccsim's run has no handshake (handshake = false, set by the driver)
// so its data direction carries data segments only, and a lost SYN would cost ns-3 its 3 s
// ConnTimeout where ccsim has nothing to lose. So: one uniform draw per packet that reaches the
// receiving device (as a per-packet RateErrorModel would draw), and only a packet that carries
// TCP payload is dropped.
class DataOnlyErrorModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ccsim::DataOnlyErrorModel")
                                .SetParent<ErrorModel>()
                                .AddConstructor<DataOnlyErrorModel>();
        return tid;
    }

    DataOnlyErrorModel()
        : m_rng(CreateObject<UniformRandomVariable>())
    {
    }

    void SetRate(double rate)
    {
        m_rate = rate;
    }

    // A stream index of its own, so that the draws do not depend on what else ns-3 draws from.
    int64_t AssignStreams(int64_t stream)
    {
        m_rng->SetStream(stream);
        return 1;
    }

    uint64_t DataDropped() const
    {
        return m_dropped;
    }

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        const bool draw = m_rng->GetValue() < m_rate;
        if (!draw)
        {
            return false;
        }
        // The device hands the frame with its PPP header; peel PPP, IPv4 and TCP off a copy to
        // see whether any payload is left.
        Ptr<Packet> copy = p->Copy();
        PppHeader ppp;
        copy->RemoveHeader(ppp);
        Ipv4Header ip;
        copy->RemoveHeader(ip);
        if (ip.GetProtocol() != TcpL4Protocol::PROT_NUMBER)
        {
            return false;
        }
        TcpHeader tcp;
        copy->RemoveHeader(tcp);
        if (copy->GetSize() == 0)
        {
            return false;
        }
        ++m_dropped;
        return true;
    }

    void DoReset() override
    {
    }

    Ptr<UniformRandomVariable> m_rng;
    double m_rate{0.0};
    uint64_t m_dropped{0};
};

// What we count per flow, from the sender socket's trace sources (TcpSocketBase): "Tx" (every
// segment handed to IP), "CongState" (the Linux-like congestion state machine), "RTO" (the
// retransmission timeout value) and "CongestionWindow" / "CongestionWindowInflated".
struct FlowStats
{
    Ptr<PacketSink> sink;
    Ptr<BulkSendApplication> app;
    double startS{0.0};
    bool connected{false};
    bool anyData{false};
    SequenceNumber32 highEnd{0}; // one past the highest byte sent so far
    uint64_t retransmits{0};
    uint64_t timeouts{0};
    uint64_t fastRecoveries{0};
    uint64_t cwrEntries{0};
    // RFC 3168 §6.1.2: at most one window reduction per window of data. A reduction (fast
    // recovery or ECN's CWR) that comes before the cumulative ACK has passed the highest byte
    // sent at the previous reduction (or RTO) breaks the rule.
    SequenceNumber32 highRxAck{0};
    SequenceNumber32 highestSeq{0};
    SequenceNumber32 lastReductionMark{0};
    bool reduced{false};
    uint64_t windowViolations{0};
    uint32_t cwnd{0};
    uint32_t cwndInflated{0};
    double cwndSum{0.0};
    double cwndInflSum{0.0};
    uint64_t samples{0};
};

std::vector<FlowStats> g_flows;
std::unique_ptr<std::ofstream> g_trace;
// The queue disc at r1's bottleneck port (RED, CoDel, FQ-CoDel or PIE), when there is one.
Ptr<QueueDisc> g_qdisc;

// A data segment that does not extend the highest byte sent is a retransmission, whatever the
// cause (fast retransmit, partial ACK, RTO, SACK recovery): the same definition as ccsim's
// flows-table column `retransmits` (docs/tcp.md §7).
void
OnTx(uint32_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    FlowStats& f = g_flows[i];
    const uint32_t len = p->GetSize();
    if (len == 0)
    {
        return;
    }
    const SequenceNumber32 seq = h.GetSequenceNumber();
    const SequenceNumber32 end = seq + len;
    if (f.anyData && end <= f.highEnd)
    {
        ++f.retransmits;
    }
    if (!f.anyData || end > f.highEnd)
    {
        f.highEnd = end;
        f.anyData = true;
    }
}

// ns-3 enters CA_RECOVERY on every fast retransmit (TcpSocketBase::EnterRecovery), and CA_CWR on
// every ECN-Echo it acts on (EnterCwr). A state trace fires only on a change, so an RTO is not
// counted here (see OnRto).
// A window reduction of flow i now: check it against the previous one (RFC 3168 §6.1.2).
void
Reduction(FlowStats& f)
{
    if (f.reduced && f.highRxAck < f.lastReductionMark)
    {
        ++f.windowViolations;
    }
    f.reduced = true;
    f.lastReductionMark = f.highestSeq;
}

void
OnCongState(uint32_t i, TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
{
    FlowStats& f = g_flows[i];
    if ((to == TcpSocketState::CA_RECOVERY || to == TcpSocketState::CA_CWR) && from != to)
    {
        Reduction(f);
    }
    if (to == TcpSocketState::CA_LOSS && from != to)
    {
        // An RTO may cut the window whenever it fires (RFC 5681 §3.1), but it starts a new
        // window: the next reduction must wait for the data sent before it.
        f.reduced = true;
        f.lastReductionMark = f.highestSeq;
    }
    if (to == TcpSocketState::CA_RECOVERY && from != TcpSocketState::CA_RECOVERY)
    {
        ++f.fastRecoveries;
    }
    if (to == TcpSocketState::CA_CWR && from != TcpSocketState::CA_CWR)
    {
        ++f.cwrEntries;
    }
}

// Every expiry of the retransmission timer doubles the RTO, capped at 60 s
// (TcpSocketBase::ReTxTimeout, RFC 6298 (5.5)); a new estimate from an RTT sample gives some
// other value. So an expiry is a change of the traced RTO to exactly twice the old value (or to
// the cap). This counts back-offs too, as ccsim's `timeouts` does.
void
OnRto(uint32_t i, Time oldRto, Time newRto)
{
    const Time cap = Seconds(60);
    const Time doubled = oldRto + oldRto;
    if (newRto == (doubled < cap ? doubled : cap) && newRto > oldRto)
    {
        ++g_flows[i].timeouts;
    }
}

// A traced value's latest value, kept in one field of flow i's stats (the cumulative ACK, the
// highest byte sent, cwnd, the inflated cwnd).
template <typename T, T FlowStats::*Field>
void
Keep(uint32_t i, T, T now)
{
    g_flows[i].*Field = now;
}

// The socket exists once the application has started (BulkSendApplication creates it in
// StartApplication); connect the trace sources then.
void
ConnectTraces(uint32_t i)
{
    FlowStats& f = g_flows[i];
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(f.app->GetSocket());
    NS_ABORT_MSG_IF(!s, "flow " << i << ": the sender has no TCP socket");
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, i));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, i));
    s->TraceConnectWithoutContext("CongestionWindow",
                                  MakeBoundCallback(&Keep<uint32_t, &FlowStats::cwnd>, i));
    s->TraceConnectWithoutContext(
        "HighestRxAck",
        MakeBoundCallback(&Keep<SequenceNumber32, &FlowStats::highRxAck>, i));
    s->TraceConnectWithoutContext(
        "HighestSequence",
        MakeBoundCallback(&Keep<SequenceNumber32, &FlowStats::highestSeq>, i));
    s->TraceConnectWithoutContext(
        "CongestionWindowInflated",
        MakeBoundCallback(&Keep<uint32_t, &FlowStats::cwndInflated>, i));
    f.connected = true;
}

// cwnd sampled every `interval`, as ccsim's time series samples it ([trace] interval): the mean
// cwnd of a flow is the mean of its samples from its start on.
void
Sample(Time interval, Time stop)
{
    const double t = Simulator::Now().GetSeconds();
    for (uint32_t i = 0; i < g_flows.size(); ++i)
    {
        FlowStats& f = g_flows[i];
        if (!f.connected || t < f.startS)
        {
            continue;
        }
        f.cwndSum += f.cwnd;
        f.cwndInflSum += f.cwndInflated;
        ++f.samples;
        if (g_trace)
        {
            *g_trace << std::setprecision(9) << t << ',' << i << ',' << f.cwnd << ','
                     << f.cwndInflated << '\n';
        }
    }
    if (Simulator::Now() + interval <= stop)
    {
        Simulator::Schedule(interval, &Sample, interval, stop);
    }
}

TypeId
CongestionOps(const std::string& name)
{
    // The congestion-control classes of ns-3's internet module, by the short names the driver
    // uses (ccsim's `cc` names where they exist).
    if (name == "newreno" || name == "reno")
    {
        return TcpNewReno::GetTypeId();
    }
    if (name == "linuxreno")
    {
        return TcpLinuxReno::GetTypeId();
    }
    if (name == "cubic")
    {
        return TcpCubic::GetTypeId();
    }
    if (name == "highspeed")
    {
        return TcpHighSpeed::GetTypeId();
    }
    if (name == "scalable")
    {
        return TcpScalable::GetTypeId();
    }
    if (name == "bic")
    {
        return TcpBic::GetTypeId();
    }
    if (name == "vegas")
    {
        return TcpVegas::GetTypeId();
    }
    if (name == "htcp")
    {
        return TcpHtcp::GetTypeId();
    }
    if (name == "bbr")
    {
        // TcpBbr turns pacing on for its socket itself (InitPacingRate).
        return TcpBbr::GetTypeId();
    }
    if (name == "dctcp")
    {
        // TcpDctcp sets the socket's ECN mode to DctcpEcn itself (Init); the bottleneck's step
        // marking is RED with MinTh = MaxTh = K, QW 1 and Gentle off (the driver's "step").
        return TcpDctcp::GetTypeId();
    }
    if (name == "ledbat")
    {
        // Needs --timestamps=1: TcpLedbat measures one-way delay from the timestamp option
        // and grows as NewReno without it.
        return TcpLedbat::GetTypeId();
    }
    NS_ABORT_MSG("--cc: \"" << name
                            << "\" is not one of newreno, linuxreno, cubic, highspeed, "
                               "scalable, bic, vegas, htcp, ledbat, bbr, dctcp");
    return TypeId();
}

// Sojourn time at r1's bottleneck port, as ccsim's links table measures it (docs/scenario.md,
// "queue delay"): from the packet's arrival at the port's queue disc to the start of its
// transmission (the device's PhyTxBegin), zero for a packet that found the link idle. The
// queue disc's own "SojournTime" trace stops at its dequeue, which with the device's one-packet
// queue is one transmission earlier; so the time of each arrival is kept by packet and read
// back when the packet begins to leave. Packets the queue disc drops are forgotten. The key is
// the packet object itself, which goes unchanged from the queue disc to the wire (headers are
// added in place), not its uid: TCP's segments are fragments of the application's writes and
// share their uid.
std::unordered_map<const Packet*, Time> g_arrivals;
std::vector<double> g_sojourns;
uint64_t g_portTx = 0;

void
QdiscEnqueue(Ptr<const QueueDiscItem> item)
{
    g_arrivals[PeekPointer(item->GetPacket())] = Simulator::Now();
}

void
QdiscDrop(Ptr<const QueueDiscItem> item)
{
    g_arrivals.erase(PeekPointer(item->GetPacket()));
}

void
PortTxBegin(Ptr<const Packet> p)
{
    ++g_portTx;
    auto it = g_arrivals.find(PeekPointer(p));
    if (it != g_arrivals.end())
    {
        g_sojourns.push_back((Simulator::Now() - it->second).GetSeconds());
        g_arrivals.erase(it);
    }
}

// The q-th quantile of the sorted samples by nearest rank (the smallest value with at least q
// of the samples at or below it), NaN without samples.
double
Quantile(const std::vector<double>& sorted, double q)
{
    if (sorted.empty())
    {
        return std::numeric_limits<double>::quiet_NaN();
    }
    const auto n = sorted.size();
    auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    rank = std::min(std::max<size_t>(rank, 1), n);
    return sorted[rank - 1];
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t flows = 1;
    std::string rate = "10Mbps";
    double rttMs = 20.0;
    std::string accessRate = "1Gbps";
    double accessDelayMs = 1.0;
    uint32_t queuePackets = 100;
    std::string queueType = "droptail";
    double redMinTh = 5.0;
    double redMaxTh = 15.0;
    double redMaxP = 0.1;
    double redQw = 0.002;
    bool redGentle = true;
    uint32_t redMeanPktSize = 1000;
    double loss = 0.0;
    double duration = 100.0;
    double startGapMs = 1.0;
    std::string cc = "newreno";
    std::string recovery = "classic";
    bool sack = true;
    bool timestamps = false;
    bool limitedTransmit = true;
    uint32_t delAckCount = 2;
    double delAckTimeoutMs = 200.0;
    uint32_t mss = 1448;
    uint32_t initialCwnd = 10;
    double minRtoMs = 1000.0;
    bool ecn = false;
    uint32_t seed = 1;
    double sampleMs = 100.0;
    std::string cwndTrace;

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "bulk TCP flows, one sender/receiver host pair each", flows);
    cmd.AddValue("rate", "bottleneck rate r1 -> r2 (and back)", rate);
    cmd.AddValue("rttMs", "round-trip propagation delay, access links included, ms", rttMs);
    cmd.AddValue("accessRate", "rate of every host's link to its router", accessRate);
    cmd.AddValue("accessDelayMs", "one-way delay of every access link, ms", accessDelayMs);
    cmd.AddValue("queue", "bottleneck queue limit, packets waiting (each direction)", queuePackets);
    cmd.AddValue("queueType",
                 "droptail, red, codel, fqcodel or pie (r1's bottleneck port; the AQMs' own "
                 "attributes are set as --ns3::CoDelQueueDisc::Target=5ms and so on)",
                 queueType);
    cmd.AddValue("redMinTh", "RED min threshold, packets", redMinTh);
    cmd.AddValue("redMaxTh", "RED max threshold, packets", redMaxTh);
    cmd.AddValue("redMaxP", "RED max_p (ns-3's LInterm is 1/max_p)", redMaxP);
    cmd.AddValue("redQw", "RED queue weight w_q", redQw);
    cmd.AddValue("redGentle", "RED gentle mode", redGentle);
    cmd.AddValue("redMeanPktSize", "RED mean packet size, bytes", redMeanPktSize);
    cmd.AddValue("loss", "uniform loss probability of data segments on r1 -> r2", loss);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("startGapMs", "flow i starts at i * startGapMs", startGapMs);
    cmd.AddValue("cc",
                 "newreno, linuxreno, cubic, highspeed, scalable, bic, vegas, htcp, ledbat, bbr, "
                 "dctcp",
                 cc);
    cmd.AddValue("recovery", "classic (TcpClassicRecovery) or prr (TcpPrrRecovery)", recovery);
    cmd.AddValue("sack", "SACK option (TcpSocketBase::Sack)", sack);
    cmd.AddValue("timestamps", "timestamp option (TcpSocketBase::Timestamp)", timestamps);
    cmd.AddValue("limitedTransmit", "TcpSocketBase::LimitedTransmit", limitedTransmit);
    cmd.AddValue("delAckCount", "segments per delayed ACK (1: no delayed ACKs)", delAckCount);
    cmd.AddValue("delAckTimeoutMs", "delayed-ACK timer, ms", delAckTimeoutMs);
    cmd.AddValue("mss", "TcpSocket::SegmentSize, payload bytes", mss);
    cmd.AddValue("initialCwnd", "TcpSocket::InitialCwnd, segments", initialCwnd);
    cmd.AddValue("minRtoMs", "TcpSocketBase::MinRto, ms", minRtoMs);
    cmd.AddValue("ecn", "ECN (TcpSocketBase::UseEcn On, and RED marks)", ecn);
    cmd.AddValue("seed", "ns-3's run number (RngRun); the seed stays 1", seed);
    cmd.AddValue("sampleMs", "cwnd sampling interval, ms", sampleMs);
    cmd.AddValue("cwndTrace", "write the cwnd samples to this CSV file", cwndTrace);
    cmd.Parse(argc, argv);

    NS_ABORT_MSG_IF(flows < 1, "--flows: at least 1");
    const double bottleneckDelayMs = rttMs / 2.0 - 2.0 * accessDelayMs;
    NS_ABORT_MSG_IF(bottleneckDelayMs < 0, "--rttMs: smaller than the access links' delays");
    NS_ABORT_MSG_IF(recovery != "classic" && recovery != "prr",
                    "--recovery: \"" << recovery << "\" is not classic or prr");
    NS_ABORT_MSG_IF(queueType != "droptail" && queueType != "red" && queueType != "codel" &&
                        queueType != "fqcodel" && queueType != "pie",
                    "--queueType: \"" << queueType
                                       << "\" is not droptail, red, codel, fqcodel or pie");

    // ns-3's convention for independent replications: one seed, a run number per replication.
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // --- TCP: every attribute whose ns-3 default differs from the scenario, or matters to it.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(CongestionOps(cc)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));
    // ccsim's `mss` (ns-3's default is 536).
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    // ccsim's `initial_window` in segments.
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    // ns-3's buffers default to 128 KiB, which would cap the window below 2x the BDP at 100 ms;
    // ccsim's `rcv_buffer` is 64 MiB and its sender keeps everything. 64 MiB here too (window
    // scaling stays on, its default, so the receiver can advertise it).
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64u << 20));
    // ccsim's `delayed_ack` (count 2, or 1 for none) and `delack_timeout`.
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(delAckTimeoutMs)));
    // ns-3 closes a connection after 6 retransmissions of the same data without progress; ccsim
    // never gives up. At 10 % loss six RTOs in a row do happen in 100 s runs of many flows.
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000000));
    // ccsim's `variant = "sack"` (SACK blocks sent and read) against "reno"/"newreno".
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    // RFC 7323 timestamps: ccsim (before issue 28) has none and measures RTT from its own send
    // times with Karn's rule; off by default here so both sample alike.
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    // ccsim's `limited_transmit` (RFC 3042); ns-3's default is on.
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    // ccsim's `rto_min` (ns-3's default, 1 s, is RFC 6298's (2.4) too).
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(minRtoMs)));
    // ccsim's `ecn` (RFC 3168): "On" makes the socket negotiate ECN and react to ECE.
    Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                       EnumValue(ecn ? TcpSocketState::On : TcpSocketState::Off));

    // --- Topology.
    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);

    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);

    // The bottleneck's queue is the device's own DropTail queue (ccsim's `queue = { type =
    // "droptail", limit = N }`: N packets waiting, the one in transmission not counted, as in
    // ccsim). ns-3 puts a traffic-control qdisc (FqCoDel) above every device by default; it is
    // removed below so that nothing else queues or drops.
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(MilliSeconds(bottleneckDelayMs)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));

    // Access links: fast, and queues that never fill (ccsim's dumbbell gives them 10^6).
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", TimeValue(MilliSeconds(accessDelayMs)));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1000000)));

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    Ipv4InterfaceContainer coreIf = addr.Assign(core);
    std::vector<NetDeviceContainer> accessDevs;
    std::vector<Ipv4InterfaceContainer> rxIfs;
    for (uint32_t i = 0; i < flows; ++i)
    {
        addr.NewNetwork();
        NetDeviceContainer in = access.Install(senders.Get(i), routers.Get(0));
        addr.Assign(in);
        accessDevs.push_back(in);
        addr.NewNetwork();
        NetDeviceContainer out = access.Install(routers.Get(1), receivers.Get(i));
        rxIfs.push_back(addr.Assign(out));
        accessDevs.push_back(out);
    }

    // Address assignment installed the default qdisc on every device: take it off everywhere.
    TrafficControlHelper tch;
    tch.Uninstall(core);
    for (auto& d : accessDevs)
    {
        tch.Uninstall(d);
    }
    if (queueType == "red")
    {
        // RED at r1's bottleneck port (ccsim's `queue = { type = "red", ... }` on r1 -> r2).
        // The device queue is one packet, so the qdisc holds what waits; LInterm is 1/max_p.
        TrafficControlHelper red;
        red.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MinTh",
                             DoubleValue(redMinTh),
                             "MaxTh",
                             DoubleValue(redMaxTh),
                             "LInterm",
                             DoubleValue(1.0 / redMaxP),
                             "QW",
                             DoubleValue(redQw),
                             "Gentle",
                             BooleanValue(redGentle),
                             "MeanPktSize",
                             UintegerValue(redMeanPktSize),
                             "UseEcn",
                             BooleanValue(ecn),
                             "LinkBandwidth",
                             DataRateValue(DataRate(rate)),
                             "LinkDelay",
                             TimeValue(MilliSeconds(bottleneckDelayMs)),
                             "MaxSize",
                             QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
        g_qdisc = red.Install(core.Get(0)).Get(0);
        DynamicCast<PointToPointNetDevice>(core.Get(0))
            ->GetQueue()
            ->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, 1));
    }
    else if (queueType != "droptail")
    {
        // CoDel, FQ-CoDel or PIE at r1's bottleneck port (ccsim's `queue = { type = "codel" |
        // "fq_codel" | "pie", ... }` on r1 -> r2), with --queue packets as the hard limit; every
        // other attribute is the class's default unless the driver sets it on the command line.
        // As for RED, the device keeps one packet, so the qdisc holds what waits.
        const std::string kind = queueType == "codel"     ? "ns3::CoDelQueueDisc"
                                 : queueType == "fqcodel" ? "ns3::FqCoDelQueueDisc"
                                                          : "ns3::PieQueueDisc";
        TrafficControlHelper aqm;
        aqm.SetRootQueueDisc(kind,
                             "MaxSize",
                             QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
        g_qdisc = aqm.Install(core.Get(0)).Get(0);
        DynamicCast<PointToPointNetDevice>(core.Get(0))
            ->GetQueue()
            ->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, 1));
    }
    if (g_qdisc)
    {
        g_qdisc->TraceConnectWithoutContext("Enqueue", MakeCallback(&QdiscEnqueue));
        g_qdisc->TraceConnectWithoutContext("Drop", MakeCallback(&QdiscDrop));
        core.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&PortTxBegin));
    }

    // Loss on the data direction only: an error model on r2's receiving device.
    Ptr<DataOnlyErrorModel> em = CreateObject<DataOnlyErrorModel>();
    em->SetRate(loss);
    em->AssignStreams(1000);
    core.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // --- Applications: bulk senders, sinks that count bytes delivered to the application.
    const uint16_t port = 5000;
    const Time stop = Seconds(duration);
    g_flows.resize(flows);
    for (uint32_t i = 0; i < flows; ++i)
    {
        FlowStats& f = g_flows[i];
        f.startS = i * startGapMs / 1000.0;
        const Address dst = InetSocketAddress(rxIfs[i].GetAddress(1), port);
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(receivers.Get(i));
        sinkApp.Start(Seconds(0));
        sinkApp.Stop(stop);
        f.sink = DynamicCast<PacketSink>(sinkApp.Get(0));

        BulkSendHelper bulk("ns3::TcpSocketFactory", dst);
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(mss * 16));
        ApplicationContainer srcApp = bulk.Install(senders.Get(i));
        srcApp.Start(Seconds(f.startS));
        srcApp.Stop(stop);
        f.app = DynamicCast<BulkSendApplication>(srcApp.Get(0));
        // Just after StartApplication created and connected the socket.
        Simulator::Schedule(Seconds(f.startS) + NanoSeconds(1), &ConnectTraces, i);
    }

    if (!cwndTrace.empty())
    {
        g_trace = std::make_unique<std::ofstream>(cwndTrace);
        NS_ABORT_MSG_IF(!*g_trace, "--cwndTrace: cannot write " << cwndTrace);
        *g_trace << "time_s,flow,cwnd_bytes,cwnd_inflated_bytes\n";
    }
    const Time interval = MilliSeconds(sampleMs);
    Simulator::Schedule(interval, &Sample, interval, stop);

    std::cout << std::setprecision(10) << "ccsim-dumbbell program=1 flows=" << flows
              << " rate=" << rate << " rtt_ms=" << rttMs << " bottleneck_delay_ms="
              << bottleneckDelayMs << " queue=" << queuePackets << " queue_type=" << queueType
              << " loss=" << loss << " duration_s=" << duration << " cc=" << cc
              << " recovery=" << recovery << " sack=" << sack << " timestamps=" << timestamps
              << " limited_transmit=" << limitedTransmit << " delack_count=" << delAckCount
              << " mss=" << mss << " initial_cwnd=" << initialCwnd << " ecn=" << ecn
              << " seed=" << seed << std::endl;

    const auto wall0 = std::chrono::steady_clock::now();
    Simulator::Stop(stop);
    Simulator::Run();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    for (uint32_t i = 0; i < flows; ++i)
    {
        const FlowStats& f = g_flows[i];
        const uint64_t bytes = f.sink->GetTotalRx();
        const double active = duration - f.startS;
        const double n = f.samples > 0 ? static_cast<double>(f.samples) : 1.0;
        std::cout << std::setprecision(10) << "flow id=" << i << " start_s=" << f.startS
                  << " bytes_delivered=" << bytes << " goodput_bps=" << bytes * 8.0 / active
                  << " retransmits=" << f.retransmits << " timeouts=" << f.timeouts
                  << " fast_recoveries=" << f.fastRecoveries << " cwr_entries=" << f.cwrEntries
                  << " mean_cwnd_bytes=" << f.cwndSum / n
                  << " mean_cwnd_inflated_bytes=" << f.cwndInflSum / n
                  << " cwnd_samples=" << f.samples
                  << " window_violations=" << f.windowViolations << std::endl;
    }
    std::cout << "run sim_s=" << duration << " wall_s=" << wall
              << " data_dropped_by_loss=" << em->DataDropped();
    if (g_qdisc && queueType == "red")
    {
        // What RED did at r1's bottleneck port: packets it marked CE and packets it dropped
        // (early, forced or at the limit), for the ECN comparison (docs/validation.md).
        const QueueDisc::Stats& st = g_qdisc->GetStats();
        std::cout << " red_marked=" << st.nTotalMarkedPackets
                  << " red_dropped=" << st.nTotalDroppedPackets;
    }
    if (g_qdisc)
    {
        // Every queue disc: its drops and marks, and the sojourn times' quantiles (seconds).
        const QueueDisc::Stats& st = g_qdisc->GetStats();
        std::sort(g_sojourns.begin(), g_sojourns.end());
        std::cout << std::setprecision(10) << " qdisc_dropped=" << st.nTotalDroppedPackets
                  << " qdisc_marked=" << st.nTotalMarkedPackets
                  << " sojourn_packets=" << g_sojourns.size() << " port_tx=" << g_portTx
                  << " qdisc_enqueued=" << st.nTotalEnqueuedPackets
                  << " sojourn_p01_s=" << Quantile(g_sojourns, 0.01)
                  << " sojourn_p05_s=" << Quantile(g_sojourns, 0.05)
                  << " sojourn_p50_s=" << Quantile(g_sojourns, 0.50)
                  << " sojourn_p95_s=" << Quantile(g_sojourns, 0.95)
                  << " sojourn_p99_s=" << Quantile(g_sojourns, 0.99) << " sojourn_max_s="
                  << (g_sojourns.empty() ? std::numeric_limits<double>::quiet_NaN()
                                         : g_sojourns.back());
    }
    std::cout << std::endl;
    Simulator::Destroy();
    return 0;
}
