# Node agent image. The JNI shim links libnetfilter_queue, libnetfilter_conntrack, libnftnl, libmnl
# and libnftables (native/pom.xml's -l flags): the build stage needs their -dev packages, the
# runtime stage their shared libraries (AgentImagePackagesTest checks both against the built .so).
# Build from the repository root:
#   docker build -f deploy/docker/agent.Dockerfile -t kube-verdict/agent .
FROM eclipse-temurin:17-jdk AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      gcc libc6-dev libnetfilter-queue-dev libnetfilter-conntrack-dev libnftnl-dev libmnl-dev libnftables-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN ./mvnw -B -q -DskipTests -pl dataplane-jni -am package

FROM eclipse-temurin:17-jre
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      libnetfilter-queue1 libnetfilter-conntrack3 libnftnl11 libmnl0 libnftables1 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/dataplane-jni/target/kube-verdict-agent.jar /opt/kube-verdict/agent.jar
# Class-data sharing for a faster start, dumped by this image's own JVM (an archive is valid only
# for the JVM build and runtime image that made it) from the classes one start loads.
COPY dataplane-jni/src/main/cds/classes.lst /opt/kube-verdict/agent.classes
RUN java -Xshare:dump -Xlog:disable -Xlog:all=error -XX:SharedClassListFile=/opt/kube-verdict/agent.classes \
      -XX:SharedArchiveFile=/opt/kube-verdict/agent.jsa -cp /opt/kube-verdict/agent.jar
# JVM settings for a start on a small node (the sandbox launcher's Launcher.JVM_OPTIONS; EntryPointsTest).
ENTRYPOINT ["java", "--enable-native-access=ALL-UNNAMED", "-XX:Tier3InvocationThreshold=1000", "-XX:Tier3MinInvocationThreshold=500", "-XX:Tier3CompileThreshold=10000", "-XX:Tier3BackEdgeThreshold=300000", "-XX:Tier4InvocationThreshold=25000", "-XX:Tier4MinInvocationThreshold=3000", "-XX:Tier4CompileThreshold=75000", "-XX:Tier4BackEdgeThreshold=200000", "-XX:+UseTransparentHugePages", "-XX:+ExitOnOutOfMemoryError", "-XX:SharedArchiveFile=/opt/kube-verdict/agent.jsa", "-Xshare:auto", "-jar", "/opt/kube-verdict/agent.jar"]
CMD ["agent", "--help"]
